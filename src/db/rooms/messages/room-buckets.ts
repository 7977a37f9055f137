/**
 * Listing a room's day buckets (messages_bucket), the rows that let a walk
 * through its history skip empty days. Shared by history pages and search.
 */
import { cql, type Database } from '../../cassandra/client.js';
import type { Direction } from '../../cassandra/bucket-walk.js';

const ROOM_BUCKETS_DESC = cql(
  'SELECT time_bucket FROM messages_bucket WHERE room_name = ? AND time_bucket >= ? AND time_bucket <= ? LIMIT ?',
  { idempotent: true },
);
const ROOM_BUCKETS_ASC = cql(
  `SELECT time_bucket FROM messages_bucket WHERE room_name = ? AND time_bucket >= ? AND time_bucket <= ?
   ORDER BY time_bucket ASC LIMIT ?`,
  { idempotent: true },
);

/** Up to `limit` of the room's day buckets in [lo, hi]: newest first walking 'older', oldest first walking 'newer'. */
export async function listRoomBuckets(db: Database, roomName: string, lo: number, hi: number, dir: Direction, limit: number): Promise<number[]> {
  const rs = await db.execute(dir === 'older' ? ROOM_BUCKETS_DESC : ROOM_BUCKETS_ASC, [roomName, lo, hi, limit]);
  return rs.rows.map((r) => r.time_bucket as number);
}
