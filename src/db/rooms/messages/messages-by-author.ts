/**
 * An author's own messages across rooms, newest first: the by-author copies
 * (messages_by_author, month-bucketed, found through its bucket table) that
 * RoomMessageStore writes beside each message.
 */
import { cql, type Database } from '../../cassandra/client.js';
import { walkBuckets, type BucketedSource } from '../../cassandra/bucket-walk.js';
import { timeUuidDate } from '../../../timeuuids.js';
import { dayBucket } from '../../../buckets.js';
import type { ChatUser } from '../chat-user.js';
import { MAX_BUCKET } from './room-messages.js';
import { postedMessage, type MessageRecord } from './message-row.js';
import { lookAhead, pageOf, type Page } from '../../cassandra/page.js';

const AUTHOR_COLUMNS = 'author_login, time_bucket, message_id, room_name, content, visible, version, edit_id, deleted';
const AUTHOR_NEWEST = cql(
  `SELECT ${AUTHOR_COLUMNS} FROM messages_by_author WHERE author_login = ? AND time_bucket = ? LIMIT ?`,
  { idempotent: true },
);
const AUTHOR_OLDER_THAN = cql(
  `SELECT ${AUTHOR_COLUMNS} FROM messages_by_author WHERE author_login = ? AND time_bucket = ? AND message_id < ? LIMIT ?`,
  { idempotent: true },
);
const AUTHOR_BUCKETS_DESC = cql(
  `SELECT time_bucket FROM messages_by_author_bucket WHERE author_login = ? AND time_bucket >= ? AND time_bucket <= ?
   LIMIT ?`,
  { idempotent: true },
);

export class MessagesByAuthorStore {
  constructor(private readonly db: Database) {}

  /** One page of an author's own messages across rooms, newest first. */
  async page(author: ChatUser, from: { bucket: number; id: string } | null, size: number): Promise<Page<MessageRecord>> {
    const { login } = author;
    const source: BucketedSource<MessageRecord> = {
      buckets: async (lo, hi, _dir, limit) => {
        const rs = await this.db.execute(AUTHOR_BUCKETS_DESC, [login, lo, hi, limit]);
        return rs.rows.map((r) => r.time_bucket as number);
      },
      read: async (bucket, _dir, after, limit) => {
        const rs = after
          ? await this.db.execute(AUTHOR_OLDER_THAN, [login, bucket, after, limit])
          : await this.db.execute(AUTHOR_NEWEST, [login, bucket, limit]);
        const rows: MessageRecord[] = [];
        for (const row of rs.rows) {
          if (!row.room_name) continue; // a hide racing a room deletion: nothing left to show
          const id = row.message_id.toString();
          // The copy keeps what a list of one's own messages shows; threads, mentions and reactions are the room's.
          rows.push({
            ...postedMessage({
              roomName: row.room_name,
              bucket: dayBucket(timeUuidDate(row.message_id)),
              messageId: id,
              author,
              content: row.deleted ? null : (row.content ?? null),
              systemMessage: false,
            }),
            visible: row.visible !== false,
            version: row.version ?? 0,
            editId: row.edit_id?.toString() ?? null,
            deleted: row.deleted === true,
          });
        }
        return { rows, fetched: rs.rows.length, lastId: rs.rows.at(-1)?.message_id.toString() ?? null };
      },
    };
    return pageOf(await walkBuckets(source, { dir: 'older', from, lo: 0, hi: MAX_BUCKET, want: lookAhead(size) }), size);
  }
}
