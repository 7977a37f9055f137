/**
 * Storage of pending_room_cleanups (cql/010, cql/011): the deleted rooms
 * whose cleanup has not finished, and the deletions that may have applied
 * (intents), one partition per UTC day of the entry's timestamp.
 */
import { cql, type Database } from '../cassandra/client.js';
import { writeTimestampMs, type WriteTimestamp } from '../cassandra/write-timestamp.js';
import { dayBucket } from '../../buckets.js';

/**
 * A deleted room's cleanup: the room, a write timestamp, and whose lists and
 * read state hold it. Confirmed (no `intentFor`), `deletedAt` is the
 * deletion's time. An intent was listed before the deletion's LWT of the room
 * created at `intentFor`: `deletedAt` is a time before it, and the deletion
 * may not have applied.
 */
export interface RoomCleanup {
  roomName: string;
  deletedAt: WriteTimestamp;
  logins: string[];
  intentFor: Date | null;
}

const INSERT = cql('INSERT INTO pending_room_cleanups (day, room_name, deleted_at, logins, room_created_at) VALUES (?, ?, ?, ?, ?)', {
  idempotent: true,
});
const SELECT_DAY = cql('SELECT room_name, deleted_at, logins, room_created_at FROM pending_room_cleanups WHERE day = ?', { idempotent: true });
const DELETE = cql('DELETE FROM pending_room_cleanups WHERE day = ? AND room_name = ? AND deleted_at = ?', { idempotent: true });

/** The partition an entry is listed in: the UTC day of its timestamp. */
const dayOf = (cleanup: RoomCleanup) => dayBucket(new Date(writeTimestampMs(cleanup.deletedAt)));

export class RoomCleanupStore {
  constructor(private readonly db: Database) {}

  /** Lists the entry, or replaces the logins of the one listed under the same key. */
  async add(cleanup: RoomCleanup): Promise<void> {
    // An unset (undefined) value writes no tombstone.
    await this.db.execute(INSERT, [dayOf(cleanup), cleanup.roomName, cleanup.deletedAt, new Set(cleanup.logins), cleanup.intentFor ?? undefined]);
  }

  /** The entries listed under `day` (a day bucket). */
  async inDay(day: number): Promise<RoomCleanup[]> {
    const rs = await this.db.execute(SELECT_DAY, [day]);
    return rs.rows.map((row) => ({
      roomName: row.room_name as string,
      deletedAt: row.deleted_at as WriteTimestamp,
      logins: [...((row.logins as Set<string> | null) ?? [])],
      intentFor: (row.room_created_at as Date | null) ?? null,
    }));
  }

  async remove(cleanup: RoomCleanup): Promise<void> {
    await this.db.execute(DELETE, [dayOf(cleanup), cleanup.roomName, cleanup.deletedAt]);
  }
}
