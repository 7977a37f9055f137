/**
 * Threads: a reply is a room message with reply_to set (it lives in the room's
 * history like any other), plus a row in its parent's thread partition
 * (message_replies) that lists the thread in order. The parent's
 * last_reply_at is written in the reply's own batch.
 */
import { cql, Long, TimeUuid, type Database, type Statement } from '../../cassandra/client.js';
import { timeMicros, timeUuidDate } from '../../../timeuuids.js';
import { dayBucket } from '../../../buckets.js';
import type { MessageRecord } from './message-row.js';
import type { RoomMessageStore } from './room-messages.js';
import { lookAhead, pageOf, type Page } from '../../cassandra/page.js';

const INSERT_REPLY = cql('INSERT INTO message_replies (room_name, parent_bucket, parent_id, reply_id) VALUES (?, ?, ?, ?)', {
  idempotent: true,
});
// At the reply's own time as write timestamp: whatever order replies commit in, the latest reply's time stays.
const TOUCH_PARENT = cql(
  'UPDATE chat_room_messages USING TIMESTAMP ? SET last_reply_at = ? WHERE room_name = ? AND time_bucket = ? AND message_id = ?',
  { idempotent: true },
);
const THREAD_FIRST = cql(
  'SELECT reply_id FROM message_replies WHERE room_name = ? AND parent_bucket = ? AND parent_id = ? LIMIT ?',
  { idempotent: true },
);
const THREAD_AFTER = cql(
  'SELECT reply_id FROM message_replies WHERE room_name = ? AND parent_bucket = ? AND parent_id = ? AND reply_id > ? LIMIT ?',
  { idempotent: true },
);
const COUNT_THREAD = cql('SELECT COUNT(*) AS n FROM message_replies WHERE room_name = ? AND parent_bucket = ? AND parent_id = ?', {
  idempotent: true,
});

/** The extra writes of a reply, in the batch that stores it: none for a message that is not one. */
export function threadWrites(message: MessageRecord): Array<{ stmt: Statement; params: unknown[] }> {
  if (!message.replyTo) return [];
  const parentBucket = dayBucket(timeUuidDate(message.replyTo));
  const replyTime = TimeUuid.fromString(message.messageId);
  return [
    { stmt: INSERT_REPLY, params: [message.roomName, parentBucket, message.replyTo, message.messageId] },
    {
      stmt: TOUCH_PARENT,
      params: [Long.fromNumber(timeMicros(replyTime)), timeUuidDate(replyTime), message.roomName, parentBucket, message.replyTo],
    },
  ];
}

export interface ParentKey {
  roomName: string;
  bucket: number;
  messageId: string;
}

export class ThreadStore {
  constructor(
    private readonly db: Database,
    private readonly messages: RoomMessageStore,
  ) {}

  /**
   * A page of a thread, oldest first, after the reply `after` (exclusive).
   * One read of the thread partition, then one read per day partition the
   * page's replies were posted in.
   */
  async page(parent: ParentKey, after: string | null, size: number): Promise<Page<MessageRecord>> {
    const key = [parent.roomName, parent.bucket, parent.messageId];
    const rs = after
      ? await this.db.execute(THREAD_AFTER, [...key, after, lookAhead(size)])
      : await this.db.execute(THREAD_FIRST, [...key, lookAhead(size)]);
    const ids = rs.rows.map((r) => r.reply_id.toString() as string);
    const page = pageOf(ids, size);
    const found = await this.messages.byIds(parent.roomName, page.rows);
    // The reply and its thread row are written in one logged batch; a reply missing here is one whose
    // room was dropped meanwhile: it is left out.
    const rows = page.rows.map((id) => found.get(id)).filter((m): m is MessageRecord => m !== undefined);
    return { rows, more: page.more };
  }

  /** How many replies a thread has: counted in its partition (exact, and only asked for parents with replies). */
  async count(parent: ParentKey): Promise<number> {
    const row = await this.db.first(COUNT_THREAD, [parent.roomName, parent.bucket, parent.messageId]);
    return row ? Number(row.n) : 0;
  }
}
