/**
 * Storage of pending_room_joins (cql/016): the joins whose system message and
 * read marker may not be written yet, one partition per UTC day of listing.
 */
import { cql, TimeUuid, type Database } from '../cassandra/client.js';
import type { WriteTimestamp } from '../cassandra/write-timestamp.js';
import { dayBucket } from '../../buckets.js';

/** A join listed at `listedAt`; `messageId` once its system message's id was taken (before that message's write). */
export interface PendingJoin {
  roomName: string;
  login: string;
  listedAt: Date;
  messageId: string | null;
  /** The write timestamp of the room's entry in the user's list, added before the join's LWT. */
  listEntryAt: WriteTimestamp;
}

const INSERT = cql('INSERT INTO pending_room_joins (day, room_name, login, listed_at, list_entry_at) VALUES (?, ?, ?, ?, ?)', {
  idempotent: true,
});
// Conditioned on the listing (a later join of that day replaces it) and on the id it replaces: of a request and
// the job, or two jobs, the one whose condition holds writes the message.
const CLAIM_MESSAGE = cql(
  'UPDATE pending_room_joins SET message_id = ? WHERE day = ? AND room_name = ? AND login = ? IF listed_at = ? AND message_id = ?',
  { idempotent: false },
);
const SELECT_ONE = cql('SELECT listed_at, message_id FROM pending_room_joins WHERE day = ? AND room_name = ? AND login = ?', { idempotent: true });
const SELECT_DAY = cql('SELECT room_name, login, listed_at, message_id, list_entry_at FROM pending_room_joins WHERE day = ?', {
  idempotent: true,
});
const DELETE = cql('DELETE FROM pending_room_joins WHERE day = ? AND room_name = ? AND login = ?', { idempotent: true });

const dayOf = (join: PendingJoin) => dayBucket(join.listedAt);

export class PendingJoinStore {
  constructor(private readonly db: Database) {}

  async add(join: PendingJoin): Promise<void> {
    await this.db.execute(INSERT, [dayOf(join), join.roomName, join.login, join.listedAt, join.listEntryAt]);
  }

  /**
   * Records `messageId` as the join's system message, if the entry is still `join` as listed and read (same
   * listing, same message id): true when this caller is the one to write that message.
   */
  async claimMessage(join: PendingJoin, messageId: string): Promise<boolean> {
    const key = [dayOf(join), join.roomName, join.login];
    const previous = join.messageId ? TimeUuid.fromString(join.messageId) : null;
    const outcome = await this.db.lwt(CLAIM_MESSAGE, [TimeUuid.fromString(messageId), ...key, join.listedAt, previous], async () => {
      const row = await this.db.readSerial(SELECT_ONE, key);
      return { applied: (row?.message_id as TimeUuid | null | undefined)?.toString() === messageId, row };
    });
    return outcome.applied;
  }

  /** The entries listed under `day` (a day bucket). */
  async inDay(day: number): Promise<PendingJoin[]> {
    const rs = await this.db.execute(SELECT_DAY, [day]);
    return rs.rows.map((row) => ({
      roomName: row.room_name as string,
      login: row.login as string,
      listedAt: row.listed_at as Date,
      messageId: (row.message_id as TimeUuid | null)?.toString() ?? null,
      listEntryAt: row.list_entry_at as WriteTimestamp,
    }));
  }

  async remove(join: PendingJoin): Promise<void> {
    await this.db.execute(DELETE, [dayOf(join), join.roomName, join.login]);
  }
}
