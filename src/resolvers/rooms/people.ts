/**
 * Participants, creators and authors are stored as chat_user values (login,
 * firstname, lastname) so a room or a page of history shows them without a
 * query per person. The User type also has fields those values lack (bio,
 * createdAt, email for its owner): each is a promise resolved through the
 * request's user DataLoader, so they cost one batched query for all the
 * people on a page, and only when a client asks for them. Every User field
 * that reads one has a resolver of its own: graphql-jit (src/server/jit-execution.ts)
 * reads a field without one straight off its parent, and would not await it.
 */
import type { Context } from '../context.js';
import type { UserRecord } from '../../db/accounts/users.js';
import type { ChatUser } from '../../db/rooms/chat-user.js';
import { userLoader } from '../accounts/reads.js';

/**
 * A stored person seen as a User: the three stored fields are plain values,
 * the rest are getters on the prototype (one shared set, not a closure and a
 * property descriptor per author on every page) that ask the user loader.
 */
class PersonAsUser {
  readonly login: string;
  readonly firstname: string;
  readonly lastname: string;
  constructor(
    private readonly ctx: Context,
    person: ChatUser,
  ) {
    this.login = person.login;
    this.firstname = person.firstname;
    this.lastname = person.lastname;
  }
  private load<K extends keyof UserRecord>(key: K): Promise<UserRecord[K] | null> {
    return userLoader(this.ctx).load(this.login).then((user) => (user ? user[key] : null));
  }
  get email() {
    return this.load('email');
  }
  get bio() {
    return this.load('bio');
  }
  get createdAt() {
    return this.load('createdAt');
  }
  get chatRooms() {
    return this.load('chatRooms');
  }
}

export function personAsUser(ctx: Context, person: ChatUser): UserRecord {
  // GraphQL awaits a field value that is a promise; the cast tells TypeScript what the client will see.
  return new PersonAsUser(ctx, person) as unknown as UserRecord;
}

/** One entry per login: a renamed user who joined again may hold two set elements. */
export function distinctPeople(people: ChatUser[]): ChatUser[] {
  const byLogin = new Map<string, ChatUser>();
  for (const p of people) byLogin.set(p.login, p);
  return [...byLogin.values()].sort((a, b) => a.login.localeCompare(b.login));
}
