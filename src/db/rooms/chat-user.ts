/**
 * A person as denormalized into rooms and messages (the chat_user type):
 * login, firstname and lastname, enough to show a participant list or a page
 * of history without a query per person.
 */
export interface ChatUser {
  login: string;
  firstname: string;
  lastname: string;
}

/** Only the three fields of the type: anything else would fail to encode. */
export function chatUser(user: { login: string; firstname: string; lastname: string }): ChatUser {
  return { login: user.login, firstname: user.firstname, lastname: user.lastname };
}

/** A decoded chat_user value; fields a very old row lacks come back empty. */
export function fromUdt(value: unknown): ChatUser {
  const v = (value ?? {}) as Partial<ChatUser>;
  return { login: v.login ?? '', firstname: v.firstname ?? '', lastname: v.lastname ?? '' };
}
