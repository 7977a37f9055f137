/** Storage of the sessions issued to each account and not yet expired (cql/013). */
import { cql, type Database } from '../cassandra/client.js';

export interface StoredSession {
  jti: string;
  expiresAt: Date;
}

const INSERT = cql('INSERT INTO user_sessions (login, jti, expires_at) VALUES (?, ?, ?) USING TTL ?', { idempotent: true });
const SELECT_OF_LOGIN = cql('SELECT jti, expires_at FROM user_sessions WHERE login = ?', { idempotent: true });
const DELETE = cql('DELETE FROM user_sessions WHERE login = ? AND jti = ?', { idempotent: true });

export class SessionStore {
  constructor(private readonly db: Database) {}

  /** Kept (by TTL) until `keepUntil`: as long as the token could still be accepted. */
  async add(login: string, session: StoredSession, keepUntil: Date): Promise<void> {
    const ttl = Math.max(1, Math.ceil((keepUntil.getTime() - Date.now()) / 1000));
    await this.db.execute(INSERT, [login, session.jti, session.expiresAt, ttl]);
  }

  /** Every live session of `login` (all pages). */
  async of(login: string): Promise<StoredSession[]> {
    const sessions: StoredSession[] = [];
    for await (const row of await this.db.execute(SELECT_OF_LOGIN, [login])) {
      sessions.push({ jti: row.jti as string, expiresAt: row.expires_at as Date });
    }
    return sessions;
  }

  async remove(login: string, jti: string): Promise<void> {
    await this.db.execute(DELETE, [login, jti]);
  }
}
