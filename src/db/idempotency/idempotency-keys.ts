/**
 * Storage of idempotency keys (idempotency_keys, cql/022): who holds a
 * viewer's key now, what the operation it was first sent with was, and the
 * answer once it is final. Every write is an LWT on the key's own partition,
 * so attempts racing on one key agree on one owner.
 */
import { cql, TimeUuid, type Database, type Row } from '../cassandra/client.js';

/** A key's row as it stands. */
export interface IdempotencyRecord {
  fingerprint: string;
  /** The first claim's timeuuid, kept by every later claim: keyed records take their ids from it. */
  seed: TimeUuid;
  /** The attempt running now; null once answered or released. */
  attempt: string | null;
  attemptStartedAt: Date | null;
  /** The final answer (JSON), once there is one. */
  response: string | null;
}

const CLAIM = cql(
  `INSERT INTO idempotency_keys (viewer, key, fingerprint, seed, attempt, attempt_started_at)
   VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS USING TTL ?`,
  { idempotent: false },
);
const TAKE_OVER = cql(
  `UPDATE idempotency_keys USING TTL ? SET attempt = ?, attempt_started_at = ?
   WHERE viewer = ? AND key = ? IF attempt = ? AND response = null`,
  { idempotent: false },
);
const COMPLETE = cql(
  `UPDATE idempotency_keys USING TTL ? SET response = ?, attempt = null
   WHERE viewer = ? AND key = ? IF attempt = ?`,
  { idempotent: false },
);
const RELEASE = cql('UPDATE idempotency_keys SET attempt = null WHERE viewer = ? AND key = ? IF attempt = ?', { idempotent: false });
const SELECT = cql('SELECT fingerprint, seed, attempt, attempt_started_at, response FROM idempotency_keys WHERE viewer = ? AND key = ?', {
  idempotent: true,
});

const toRecord = (row: Row): IdempotencyRecord => ({
  fingerprint: row.fingerprint,
  seed: row.seed,
  attempt: row.attempt ? row.attempt.toString() : null,
  attemptStartedAt: row.attempt_started_at ?? null,
  response: row.response ?? null,
});

export class IdempotencyKeyStore {
  constructor(private readonly db: Database) {}

  /**
   * Claims the key for `attempt` (whose timeuuid is also the seed) unless it
   * has a row. Answers whether this call claimed it, and the row otherwise
   * (as the LWT returned it, or as read back at SERIAL).
   */
  async claim(
    viewer: string,
    key: string,
    fingerprint: string,
    attempt: TimeUuid,
    at: Date,
    ttlSeconds: number,
  ): Promise<{ claimed: true } | { claimed: false; record: IdempotencyRecord | undefined }> {
    const outcome = await this.db.lwt(CLAIM, [viewer, key, fingerprint, attempt, attempt, at, ttlSeconds], async () => {
      const row = await this.db.readSerial(SELECT, [viewer, key]);
      return { applied: row?.attempt?.toString() === attempt.toString() && row?.seed?.toString() === attempt.toString(), row };
    });
    if (outcome.applied) return { claimed: true };
    const row = outcome.row?.fingerprint !== undefined ? outcome.row : await this.db.readSerial(SELECT, [viewer, key]);
    // Gone between the LWT and the read (its TTL ran out): nobody holds it, and the caller may claim again.
    return { claimed: false, record: row?.fingerprint ? toRecord(row) : undefined };
  }

  /** Gives the key to `attempt`, if it still names `from` (null: released) and holds no answer. */
  async takeOver(viewer: string, key: string, from: string | null, attempt: TimeUuid, at: Date, ttlSeconds: number): Promise<boolean> {
    const outcome = await this.db.lwt(
      TAKE_OVER,
      [ttlSeconds, attempt, at, viewer, key, from === null ? null : TimeUuid.fromString(from)],
      async () => {
        const row = await this.db.readSerial(SELECT, [viewer, key]);
        return { applied: row?.attempt?.toString() === attempt.toString(), row };
      },
    );
    return outcome.applied;
  }

  /** Writes the final answer of `attempt`; false when the key no longer names it (another attempt took it over). */
  async complete(viewer: string, key: string, attempt: TimeUuid, response: string, ttlSeconds: number): Promise<boolean> {
    const outcome = await this.db.lwt(COMPLETE, [ttlSeconds, response, viewer, key, attempt], async () => {
      const row = await this.db.readSerial(SELECT, [viewer, key]);
      return { applied: row?.response === response && !row?.attempt, row };
    });
    return outcome.applied;
  }

  /** Lets the key run again: `attempt` ended without a final answer. */
  async release(viewer: string, key: string, attempt: TimeUuid): Promise<void> {
    await this.db.lwt(RELEASE, [viewer, key, attempt], async () => {
      const row = await this.db.readSerial(SELECT, [viewer, key]);
      return { applied: row?.attempt?.toString() !== attempt.toString(), row };
    });
  }

  /** The key's row as it stands (a plain read, polled while another attempt runs). */
  async read(viewer: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = await this.db.first(SELECT, [viewer, key]);
    return row?.fingerprint ? toRecord(row) : undefined;
  }
}
