/**
 * Where a resumable data backfill has got to (backfill_progress, cql/021): one row per backfill holding the Murmur3
 * token of the last partition it finished a page in. A run that stops midway is resumed from there (that partition
 * read again whole); a run that reaches the end clears it, so the next one starts over.
 */
import type cassandra from 'cassandra-driver';
import { cql, Long, type Database } from './client.js';

/** A partition's Murmur3 token. */
export type PartitionToken = cassandra.types.Long;

/** The lowest Murmur3 token: a scan from it reads the whole table. */
export const FIRST_TOKEN: PartitionToken = Long.MIN_VALUE;

const SELECT_PROGRESS = cql('SELECT resume_token FROM backfill_progress WHERE backfill = ?', { idempotent: true });
const SAVE_PROGRESS = cql('UPDATE backfill_progress SET resume_token = ? WHERE backfill = ?', { idempotent: true });
const CLEAR_PROGRESS = cql('DELETE FROM backfill_progress WHERE backfill = ?', { idempotent: true });

export class BackfillProgress {
  /** `backfill`: the name of its row. */
  constructor(
    private readonly db: Database,
    private readonly backfill: string,
  ) {}

  /** The token an interrupted run recorded (null: none, start from the first). */
  async resumeToken(): Promise<PartitionToken | null> {
    return ((await this.db.first(SELECT_PROGRESS, [this.backfill]))?.resume_token as PartitionToken | null | undefined) ?? null;
  }

  async save(token: PartitionToken): Promise<void> {
    await this.db.execute(SAVE_PROGRESS, [token, this.backfill]);
  }

  /** The run reached the end: the next one starts over. */
  async clear(): Promise<void> {
    await this.db.execute(CLEAR_PROGRESS, [this.backfill]);
  }
}
