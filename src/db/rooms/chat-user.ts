/**
 * The chat_user type: a person as denormalized into rooms and messages
 * (login, firstname and lastname), enough to show a participant list or a
 * page of history without a query per person.
 */
export interface ChatUser {
  login: string;
  firstname: string;
  lastname: string;
}

/** A decoded chat_user value; fields a very old row lacks come back empty. */
export function fromUdt(value: unknown): ChatUser {
  const v = (value ?? {}) as Partial<ChatUser>;
  return { login: v.login ?? '', firstname: v.firstname ?? '', lastname: v.lastname ?? '' };
}
