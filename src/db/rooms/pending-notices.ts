/**
 * Storage of pending_room_notices (cql/016): the changes of a room's membership whose system message (and, for a
 * join, read marker) may not be written yet, one partition per UTC day of listing.
 */
import { cql, TimeUuid, type Database } from '../cassandra/client.js';
import type { WriteTimestamp } from '../cassandra/write-timestamp.js';
import { dayBucket } from '../../buckets.js';

export type NoticeKind = 'join' | 'leave' | 'removal' | 'ban';

/** A change listed at `listedAt`; `messageId` once its system message's id was claimed (before that message's write). */
export interface PendingNotice {
  roomName: string;
  login: string;
  kind: NoticeKind;
  listedAt: Date;
  messageId: string | null;
  /** A join's: the write timestamp of the room's entry in the user's list, added before the join's LWT. */
  listEntryAt: WriteTimestamp | null;
  /** A removal's or a ban's: the moderator. */
  byLogin: string | null;
}

const INSERT = cql(
  'INSERT INTO pending_room_notices (day, room_name, login, kind, listed_at, list_entry_at, by_login) VALUES (?, ?, ?, ?, ?, ?, ?)',
  { idempotent: true },
);
// Conditioned on the listing (a later change of that day replaces it) and on the id it replaces: of a request and
// the job, or two jobs, the one whose condition holds writes the message.
const CLAIM_MESSAGE = cql(
  'UPDATE pending_room_notices SET message_id = ? WHERE day = ? AND room_name = ? AND login = ? AND kind = ? IF listed_at = ? AND message_id = ?',
  { idempotent: false },
);
const SELECT_ONE = cql('SELECT listed_at, message_id FROM pending_room_notices WHERE day = ? AND room_name = ? AND login = ? AND kind = ?', {
  idempotent: true,
});
const SELECT_DAY = cql('SELECT room_name, login, kind, listed_at, message_id, list_entry_at, by_login FROM pending_room_notices WHERE day = ?', {
  idempotent: true,
});
const DELETE = cql('DELETE FROM pending_room_notices WHERE day = ? AND room_name = ? AND login = ? AND kind = ?', { idempotent: true });

const keyOf = (notice: PendingNotice) => [dayBucket(notice.listedAt), notice.roomName, notice.login, notice.kind];

export class PendingNoticeStore {
  constructor(private readonly db: Database) {}

  async add(notice: PendingNotice): Promise<void> {
    // An unset (undefined) value writes no tombstone.
    await this.db.execute(INSERT, [...keyOf(notice), notice.listedAt, notice.listEntryAt ?? undefined, notice.byLogin ?? undefined]);
  }

  /**
   * Records `messageId` as the change's system message, if the entry is still `notice` as listed and read (same
   * listing, same message id): true when this caller is the one to write that message.
   */
  async claimMessage(notice: PendingNotice, messageId: string): Promise<boolean> {
    const key = keyOf(notice);
    const previous = notice.messageId ? TimeUuid.fromString(notice.messageId) : null;
    const outcome = await this.db.lwt(CLAIM_MESSAGE, [TimeUuid.fromString(messageId), ...key, notice.listedAt, previous], async () => {
      const row = await this.db.readSerial(SELECT_ONE, key);
      return { applied: (row?.message_id as TimeUuid | null | undefined)?.toString() === messageId, row };
    });
    return outcome.applied;
  }

  /** The entries listed under `day` (a day bucket). */
  async inDay(day: number): Promise<PendingNotice[]> {
    const rs = await this.db.execute(SELECT_DAY, [day]);
    return rs.rows.map((row) => ({
      roomName: row.room_name as string,
      login: row.login as string,
      kind: row.kind as NoticeKind,
      listedAt: row.listed_at as Date,
      messageId: (row.message_id as TimeUuid | null)?.toString() ?? null,
      listEntryAt: (row.list_entry_at as WriteTimestamp | null) ?? null,
      byLogin: (row.by_login as string | null) ?? null,
    }));
  }

  async remove(notice: PendingNotice): Promise<void> {
    await this.db.execute(DELETE, keyOf(notice));
  }
}
