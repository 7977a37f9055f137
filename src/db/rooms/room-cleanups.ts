/**
 * Storage of pending_room_cleanups (cql/010): the deleted rooms whose cleanup
 * has not finished, one partition per UTC day of the deletion.
 */
import { cql, type Database } from '../cassandra/client.js';
import { writeTimestampMs, type WriteTimestamp } from '../cassandra/write-timestamp.js';
import { dayBucket } from '../../buckets.js';

/** A deleted room's cleanup: the room, the deletion's write timestamp, and whose lists and read state hold it. */
export interface RoomCleanup {
  roomName: string;
  deletedAt: WriteTimestamp;
  logins: string[];
}

const INSERT = cql('INSERT INTO pending_room_cleanups (day, room_name, deleted_at, logins) VALUES (?, ?, ?, ?)', {
  idempotent: true,
});
const SELECT_DAY = cql('SELECT room_name, deleted_at, logins FROM pending_room_cleanups WHERE day = ?', { idempotent: true });
const DELETE = cql('DELETE FROM pending_room_cleanups WHERE day = ? AND room_name = ? AND deleted_at = ?', { idempotent: true });

/** The partition a cleanup is listed in: the UTC day of its deletion. */
const dayOf = (cleanup: RoomCleanup) => dayBucket(new Date(writeTimestampMs(cleanup.deletedAt)));

export class RoomCleanupStore {
  constructor(private readonly db: Database) {}

  async add(cleanup: RoomCleanup): Promise<void> {
    await this.db.execute(INSERT, [dayOf(cleanup), cleanup.roomName, cleanup.deletedAt, new Set(cleanup.logins)]);
  }

  /** The cleanups of rooms deleted on `day` (a day bucket) still listed. */
  async inDay(day: number): Promise<RoomCleanup[]> {
    const rs = await this.db.execute(SELECT_DAY, [day]);
    return rs.rows.map((row) => ({
      roomName: row.room_name as string,
      deletedAt: row.deleted_at as WriteTimestamp,
      logins: [...((row.logins as Set<string> | null) ?? [])],
    }));
  }

  async remove(cleanup: RoomCleanup): Promise<void> {
    await this.db.execute(DELETE, [dayOf(cleanup), cleanup.roomName, cleanup.deletedAt]);
  }
}
