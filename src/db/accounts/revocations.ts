/** Storage of revoked tokens (see cql/001_accounts.cql for the partitioning). */
import { cql, type Database } from '../cassandra/client.js';
import { dayBucket } from '../../buckets.js';

const INSERT = cql('INSERT INTO revoked_tokens (expiry_day, jti, expires_at) VALUES (?, ?, ?) USING TTL ?', {
  idempotent: true,
});
const SELECT_ONE = cql('SELECT jti FROM revoked_tokens WHERE expiry_day = ? AND jti = ?', { idempotent: true });
const SELECT_DAY = cql('SELECT jti, expires_at FROM revoked_tokens WHERE expiry_day = ?', { idempotent: true });

const DAY_MS = 86_400_000;

export class RevocationStore {
  constructor(private readonly db: Database) {}

  /** Kept (by TTL) until `keepUntil`, which may be a little after the token expires. */
  async revoke(jti: string, expiresAt: Date, keepUntil: Date = expiresAt): Promise<void> {
    const ttl = Math.max(1, Math.ceil((keepUntil.getTime() - Date.now()) / 1000));
    await this.db.execute(INSERT, [dayBucket(expiresAt), jti, expiresAt, ttl]);
  }

  /** One token's revocation, read from storage (when the in-memory list may have missed it). */
  async isRevoked(jti: string, expiresAt: Date): Promise<boolean> {
    return (await this.db.first(SELECT_ONE, [dayBucket(expiresAt), jti])) !== undefined;
  }

  /** Every revocation still live: tokens expire within maxTokenLifetimeMs of now. */
  async loadLive(maxTokenLifetimeMs: number): Promise<Array<{ jti: string; expiresAt: Date }>> {
    const days = new Set<number>();
    for (let t = Date.now(); t <= Date.now() + maxTokenLifetimeMs + DAY_MS; t += DAY_MS) days.add(dayBucket(new Date(t)));
    const live: Array<{ jti: string; expiresAt: Date }> = [];
    await Promise.all(
      [...days].map(async (day) => {
        // Iterating the result set fetches every page, however many tokens were revoked that day.
        for await (const row of await this.db.execute(SELECT_DAY, [day])) {
          live.push({ jti: row.jti as string, expiresAt: row.expires_at as Date });
        }
      }),
    );
    return live;
  }
}
