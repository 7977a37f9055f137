/**
 * Participants, creators and authors are stored as chat_user values (login,
 * firstname, lastname) so a room or a page of history shows them without a
 * query per person. The User type also has fields those values lack (bio,
 * createdAt, email for its owner): each is a promise resolved through the
 * request's user DataLoader, so they cost one batched query for all the
 * people on a page, and only when a client asks for them.
 */
import type { Context } from '../../context.js';
import type { UserRecord } from '../../db/accounts/users.js';
import type { ChatUser } from './model.js';

export function personAsUser(ctx: Context, person: ChatUser): UserRecord {
  const load = <K extends keyof UserRecord>(key: K) =>
    ctx.loaders.user.load(person.login).then((user) => (user ? user[key] : null));
  const lazy = (key: keyof UserRecord): PropertyDescriptor => ({ get: () => load(key), enumerable: true });
  // GraphQL awaits a field value that is a promise; the cast tells TypeScript what the client will see.
  return Object.defineProperties(
    { login: person.login, firstname: person.firstname, lastname: person.lastname },
    { email: lazy('email'), bio: lazy('bio'), createdAt: lazy('createdAt'), chatRooms: lazy('chatRooms') },
  ) as unknown as UserRecord;
}

/** One entry per login: a renamed user who joined again may hold two set elements. */
export function distinctPeople(people: ChatUser[]): ChatUser[] {
  const byLogin = new Map<string, ChatUser>();
  for (const p of people) byLogin.set(p.login, p);
  return [...byLogin.values()].sort((a, b) => a.login.localeCompare(b.login));
}
