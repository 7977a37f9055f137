/** Storage of accounts: the users table. One prepared statement per query. */
import { cql, type Database, type LwtOutcome, type Row } from '../cassandra/client.js';
import { writeTimestampOf } from '../cassandra/write-timestamp.js';

export interface UserRecord {
  login: string;
  passwordHash: string;
  firstname: string;
  lastname: string;
  email: string;
  bio: string | null;
  chatRooms: Set<string>;
  createdAt: Date;
  /** When they last went offline, as stored (presence has later sightings while Redis keeps them). */
  lastSeenAt: Date | null;
  /** The session (jti) whose changePassword last set the password, if one did. */
  passwordChangedBy: string | null;
}

const INSERT_IF_NOT_EXISTS = cql(
  `INSERT INTO users (login, pass, firstname, lastname, email, bio, created_at)
   VALUES (?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS`,
  { idempotent: false },
);
const SELECT_BY_LOGIN = cql(
  'SELECT login, pass, firstname, lastname, email, bio, chat_rooms, created_at, last_seen_at, pass_changed_by FROM users WHERE login = ?',
  { idempotent: true },
);
const SELECT_MANY = cql(
  'SELECT login, pass, firstname, lastname, email, bio, chat_rooms, created_at, last_seen_at, pass_changed_by FROM users WHERE login IN ?',
  { idempotent: true },
);
// The password changes only from the hash its owner's check was made against: of two changes racing, one applies.
const CHANGE_PASSWORD_IF = cql('UPDATE users SET pass = ?, pass_changed_by = ? WHERE login = ? IF pass = ?', { idempotent: false });
// Unset (undefined) values leave their columns untouched: a partial update.
// Stamped with the sighting's own time: of two sightings written in any order, the later one stays. Only
// for logins of accounts (a session's): an UPDATE of any other would make a row of it.
const UPDATE_LAST_SEEN = cql('UPDATE users USING TIMESTAMP ? SET last_seen_at = ? WHERE login = ?', {
  idempotent: true,
});
const UPDATE_PROFILE = cql('UPDATE users SET firstname = ?, lastname = ?, email = ?, bio = ? WHERE login = ?', {
  idempotent: true,
});

function toUser(row: Row): UserRecord {
  return {
    login: row.login,
    passwordHash: row.pass,
    firstname: row.firstname,
    lastname: row.lastname,
    email: row.email,
    bio: row.bio ?? null,
    chatRooms: (row.chat_rooms as Set<string> | null) ?? new Set(),
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at ?? null,
    passwordChangedBy: row.pass_changed_by ?? null,
  };
}

export class UserStore {
  constructor(private readonly db: Database) {}

  /** Returns false when the login is taken. */
  async insertIfNotExists(user: Omit<UserRecord, 'chatRooms' | 'lastSeenAt' | 'passwordChangedBy'>): Promise<boolean> {
    const params = [user.login, user.passwordHash, user.firstname, user.lastname, user.email, user.bio, user.createdAt];
    for (let attempt = 1; ; attempt++) {
      const outcome: LwtOutcome = await this.db.lwt(INSERT_IF_NOT_EXISTS, params, async () => {
        const row = await this.db.readSerial(SELECT_BY_LOGIN, [user.login]);
        // Ours if the stored hash (salted, so unique) is the one we wrote.
        return { applied: row?.pass === user.passwordHash, row };
      });
      // No row after an unknown outcome: the insert did not apply and nobody else's did; trying again is safe.
      if (outcome.applied || outcome.row || attempt === 3) return outcome.applied;
    }
  }

  async byLogin(login: string): Promise<UserRecord | undefined> {
    const row = await this.db.first(SELECT_BY_LOGIN, [login]);
    return row ? toUser(row) : undefined;
  }

  /** Batch lookup for the DataLoader: one multi-partition read. */
  async byLogins(logins: readonly string[]): Promise<UserRecord[]> {
    if (logins.length === 0) return [];
    const rs = await this.db.execute(SELECT_MANY, [[...new Set(logins)]]);
    return rs.rows.map(toUser);
  }

  /** Replaces the password hash `from` with `to`, set by session `by`; false when the stored hash is no longer `from`. */
  async changePasswordIf(login: string, from: string, to: string, by: string): Promise<boolean> {
    const outcome = await this.db.lwt(CHANGE_PASSWORD_IF, [to, by, login, from], async () => {
      const row = await this.db.readSerial(SELECT_BY_LOGIN, [login]);
      // Ours if the stored hash (salted, so unique) is the one we wrote.
      return { applied: row?.pass === to, row };
    });
    return outcome.applied;
  }

  /** Records that `login` was last seen online at `at`, unless a later sighting is stored. */
  async recordLastSeen(login: string, at: Date): Promise<void> {
    await this.db.execute(UPDATE_LAST_SEEN, [writeTimestampOf(at), at, login]);
  }

  async updateProfile(
    login: string,
    patch: { firstname?: string; lastname?: string; email?: string; bio?: string },
  ): Promise<void> {
    await this.db.execute(UPDATE_PROFILE, [patch.firstname, patch.lastname, patch.email, patch.bio, login]);
  }
}
