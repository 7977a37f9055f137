/**
 * Storage of chat messages: a room's day-bucketed history, the bucket table
 * that lets history skip empty days, and the by-author copy (month buckets).
 * The clientMessageId claims that make a retried post idempotent are in
 * message-client-ids.ts.
 */
import { cql, type Database, type Statement } from '../../cassandra/client.js';
import { fromUdt } from '../chat-user.js';
import { MESSAGE_COLUMNS, toMessage, type MessageRecord } from './message-row.js';
import { threadWrites } from './threads.js';
import { mentionWrites } from '../read-state.js';
import { copyTimestamp } from './message-edits.js';
import { RecentBuckets } from '../../cassandra/recent-buckets.js';
import { listRoomBuckets } from './room-buckets.js';
import { maxTimeUuid, minTimeUuid, timeUuidDate } from '../../../timeuuids.js';
import { walkBuckets, type BucketedSource, type Direction } from '../../cassandra/bucket-walk.js';
import { dayBucket, monthOfDay } from '../../../buckets.js';
import { Limits } from '../../../limits.js';
import { maxLong, type WriteTimestamp } from '../../cassandra/write-timestamp.js';
import { lookAhead, pageOf, type Page } from '../../cassandra/page.js';

/** What a post needs to know about the room: its name and which incarnation of that name it is. */
export interface RoomIncarnation {
  name: string;
  createdAt: Date;
}

// visible is left out on purpose: null means visible, and re-writing a message never un-hides it.
// reply_to, mentions, terms, poll, forwarded_from and metadata are bound unset (undefined) when empty: a bound null
// would write a tombstone.
const INSERT_MESSAGE = cql(
  `INSERT INTO chat_room_messages
     (room_name, time_bucket, message_id, content, author, system_message, reply_to, mentions, terms, poll, forwarded_from, metadata, attachments)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  // mentions (7) and attachments (12) are lists; terms (8) is a set, which a second run writes the same.
  { idempotent: true, writesList: [7, 12] },
);
const INSERT_ROOM_BUCKET = cql('INSERT INTO messages_bucket (room_name, time_bucket) VALUES (?, ?)', { idempotent: true });
const INSERT_BY_AUTHOR = cql(
  `INSERT INTO messages_by_author (author_login, time_bucket, message_id, room_name, content)
   VALUES (?, ?, ?, ?, ?)`,
  { idempotent: true },
);
const INSERT_AUTHOR_BUCKET = cql('INSERT INTO messages_by_author_bucket (author_login, time_bucket) VALUES (?, ?)', {
  idempotent: true,
});

const SELECT_IN_BUCKET = cql(
  `SELECT ${MESSAGE_COLUMNS} FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id IN ?`,
  { idempotent: true },
);
const SELECT_MESSAGE = cql(
  `SELECT ${MESSAGE_COLUMNS} FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?`,
  { idempotent: true },
);
// History reads. The floor (message_id >= the room's creation) keeps a re-created
// room from showing leftovers of an earlier room of the same name.
const ROOM_NEWEST = cql(
  `SELECT ${MESSAGE_COLUMNS} FROM chat_room_messages
   WHERE room_name = ? AND time_bucket = ? AND message_id >= ? LIMIT ?`,
  { idempotent: true },
);
const ROOM_OLDER_THAN = cql(
  `SELECT ${MESSAGE_COLUMNS} FROM chat_room_messages
   WHERE room_name = ? AND time_bucket = ? AND message_id < ? AND message_id >= ? LIMIT ?`,
  { idempotent: true },
);
// Catch-up reads (oldest first) stop at a ceiling (now, plus clock skew).
const ROOM_OLDEST = cql(
  `SELECT ${MESSAGE_COLUMNS} FROM chat_room_messages
   WHERE room_name = ? AND time_bucket = ? AND message_id >= ? AND message_id <= ? ORDER BY message_id ASC LIMIT ?`,
  { idempotent: true },
);
const ROOM_NEWER_THAN = cql(
  `SELECT ${MESSAGE_COLUMNS} FROM chat_room_messages
   WHERE room_name = ? AND time_bucket = ? AND message_id > ? AND message_id <= ? ORDER BY message_id ASC LIMIT ?`,
  { idempotent: true },
);

// A hidden message leaves the search index with its terms (search also drops hidden rows the index still
// finds: an edit racing the hide can write terms back).
const HIDE_MESSAGE = cql(
  'UPDATE chat_room_messages SET visible = false, terms = null WHERE room_name = ? AND time_bucket = ? AND message_id = ?',
  { idempotent: true },
);
const HIDE_BY_AUTHOR = cql(
  'UPDATE messages_by_author SET visible = false WHERE author_login = ? AND time_bucket = ? AND message_id = ?',
  { idempotent: true },
);

const SELECT_ALL_ROOM_BUCKETS = cql('SELECT time_bucket FROM messages_bucket WHERE room_name = ?', { idempotent: true });
const SELECT_AUTHORS_IN_BUCKET = cql(
  `SELECT message_id, author, system_message, version, reaction_kinds, last_reply_at, poll, attachments FROM chat_room_messages
   WHERE room_name = ? AND time_bucket = ?`,
  { idempotent: true },
);
// A deleted room's cleanup. Every delete carries the deletion's timestamp, so
// the messages, bucket rows and author copies of a room of the same name
// created since (written later) survive it.
const DELETE_BY_AUTHOR = cql(
  'DELETE FROM messages_by_author USING TIMESTAMP ? WHERE author_login = ? AND time_bucket = ? AND message_id = ?',
  { idempotent: true },
);
// A message's own partitions (earlier versions, reactions, thread), dropped with its room.
const DELETE_MESSAGE_PARTS = [
  'DELETE FROM message_versions USING TIMESTAMP ? WHERE room_name = ? AND time_bucket = ? AND message_id = ?',
  'DELETE FROM message_reactions USING TIMESTAMP ? WHERE room_name = ? AND time_bucket = ? AND message_id = ?',
  'DELETE FROM message_replies USING TIMESTAMP ? WHERE room_name = ? AND parent_bucket = ? AND parent_id = ?',
].map((text) => cql(text, { idempotent: true }));
const DELETE_ROOM_PARTITION = cql('DELETE FROM chat_room_messages USING TIMESTAMP ? WHERE room_name = ? AND time_bucket = ?', {
  idempotent: true,
});
const DELETE_ROOM_BUCKETS = cql('DELETE FROM messages_bucket USING TIMESTAMP ? WHERE room_name = ?', { idempotent: true });

/**
 * A message of a deleted room whose cleanup drops what it holds in other
 * tables (its poll's votes, its files): what dropRoom hands its caller, page
 * by page, before the page's rows can go.
 */
export interface DroppedMessage {
  roomName: string;
  bucket: number;
  messageId: string;
  hasPoll: boolean;
  attachments: string[];
}

/** Above every day bucket (yyyyMMdd): a walk back in time starts below it. */
export const MAX_BUCKET = 99_999_999;

export class RoomMessageStore {
  /**
   * Per instance, like the seed's buffered map. Keyed by room incarnation
   * (name and createdAt), never by name alone: a deleted room's cleanup drops
   * the bucket rows, and a room of the same name created since is a new key on
   * every instance (its createdAt follows the deletion, which follows the old
   * room's), so its first post anywhere writes its own bucket row, after the
   * deletion's timestamp, where the cleanup cannot reach it. No instance needs
   * to hear of the deletion for that.
   */
  private readonly recorded = new RecentBuckets();

  constructor(private readonly db: Database) {}

  /**
   * Writes a message, its by-author copy (not for system messages) and, the
   * first time this instance sees its bucket, the bucket rows: one logged
   * batch, so a message is never stored without the bucket row that finds it.
   * Idempotent: writing the same message twice stores it once.
   */
  async insert(room: RoomIncarnation, message: MessageRecord): Promise<void> {
    const id = message.messageId;
    const roomBucketKey = `r\u0000${room.name}\u0000${room.createdAt.getTime()}\u0000${message.bucket}`;
    const month = monthOfDay(message.bucket);
    const authorBucketKey = `a\u0000${message.author.login}\u0000${month}`;
    const queries: Array<{ stmt: Statement; params: unknown[] }> = [
      {
        stmt: INSERT_MESSAGE,
        params: [
          room.name,
          message.bucket,
          id,
          message.content,
          message.author,
          message.systemMessage,
          message.replyTo ?? undefined,
          message.mentions.length > 0 ? message.mentions : undefined,
          // A set column: bound as a Set, so that the only array of the statement is the list of mentions.
          message.terms?.length ? new Set(message.terms) : undefined,
          message.poll ? JSON.stringify(message.poll) : undefined,
          message.forwardedFrom ?? undefined,
          message.metadata ?? undefined,
          message.attachments.length > 0 ? message.attachments : undefined,
        ],
      },
      ...threadWrites(message),
      ...mentionWrites(message),
    ];
    const roomBucketNew = !this.recorded.has(roomBucketKey);
    if (roomBucketNew) queries.push({ stmt: INSERT_ROOM_BUCKET, params: [room.name, message.bucket] });
    const authorBucketNew = !message.systemMessage && !this.recorded.has(authorBucketKey);
    if (!message.systemMessage) {
      queries.push({ stmt: INSERT_BY_AUTHOR, params: [message.author.login, month, id, room.name, message.content] });
      if (authorBucketNew) queries.push({ stmt: INSERT_AUTHOR_BUCKET, params: [message.author.login, month] });
    }
    if (queries.length === 1) await this.db.execute(queries[0]!.stmt, queries[0]!.params);
    else await this.db.batch(queries);
    // Remember only after the write succeeded: a failed batch must be retried with its bucket rows.
    if (roomBucketNew) this.recorded.add(roomBucketKey);
    if (authorBucketNew) this.recorded.add(authorBucketKey);
  }

  async byKey(roomName: string, bucket: number, messageId: string): Promise<MessageRecord | undefined> {
    const row = await this.db.first(SELECT_MESSAGE, [roomName, bucket, messageId]);
    return row ? toMessage(row) : undefined;
  }

  /** Messages of one room by id: one read per day bucket the ids fall in, all at once. */
  async byIds(roomName: string, ids: readonly string[]): Promise<Map<string, MessageRecord>> {
    const byBucket = new Map<number, string[]>();
    for (const id of ids) {
      const bucket = dayBucket(timeUuidDate(id));
      byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), id]);
    }
    const found = new Map<string, MessageRecord>();
    await Promise.all(
      [...byBucket].map(async ([bucket, inBucket]) => {
        for (const row of (await this.db.execute(SELECT_IN_BUCKET, [roomName, bucket, inBucket])).rows) {
          const message = toMessage(row);
          if (message) found.set(message.messageId, message);
        }
      }),
    );
    return found;
  }

  /**
   * One page of a room's history. Walks newest to oldest ('older') or oldest
   * to newest ('newer') from `from` (exclusive), never below `room.createdAt`;
   * walking newer, never above `readUpTo`.
   */
  async page(
    room: RoomIncarnation,
    dir: Direction,
    from: { bucket: number; id: string } | null,
    size: number,
    readUpTo: Date,
  ): Promise<Page<MessageRecord>> {
    const floor = minTimeUuid(room.createdAt);
    const ceiling = maxTimeUuid(readUpTo);
    // Nothing can be newer than the cursor (or in the room) yet: no need to ask.
    const readFrom = from ? timeUuidDate(from.id) : room.createdAt;
    if (dir === 'newer' && readUpTo < readFrom) return { rows: [], more: false };
    const source: BucketedSource<MessageRecord> = {
      buckets: (lo, hi, direction, limit) => listRoomBuckets(this.db, room.name, lo, hi, direction, limit),
      read: async (bucket, direction, after, limit) => {
        const rs =
          direction === 'older'
            ? after
              ? await this.db.execute(ROOM_OLDER_THAN, [room.name, bucket, after, floor, limit])
              : await this.db.execute(ROOM_NEWEST, [room.name, bucket, floor, limit])
            : after
              ? await this.db.execute(ROOM_NEWER_THAN, [room.name, bucket, after, ceiling, limit])
              : await this.db.execute(ROOM_OLDEST, [room.name, bucket, floor, ceiling, limit]);
        return {
          rows: rs.rows.map(toMessage).filter((m): m is MessageRecord => m !== undefined),
          fetched: rs.rows.length,
          lastId: rs.rows.at(-1)?.message_id.toString() ?? null,
        };
      },
    };
    const hi = dir === 'newer' ? dayBucket(readUpTo) : MAX_BUCKET;
    return pageOf(await walkBuckets(source, { dir, from, lo: dayBucket(room.createdAt), hi, want: lookAhead(size) }), size);
  }

  /** Hides a message in the room's history and in its author's copy, in one logged batch. */
  async hide(message: MessageRecord): Promise<void> {
    const queries = [{ stmt: HIDE_MESSAGE, params: [message.roomName, message.bucket, message.messageId] }];
    if (!message.systemMessage) {
      const month = monthOfDay(message.bucket);
      queries.push({ stmt: HIDE_BY_AUTHOR, params: [message.author.login, month, message.messageId] });
    }
    await this.db.batch(queries);
  }

  /**
   * Drops a deleted room's history as of `at` (the deletion): every day
   * partition listed in its bucket table, the by-author copies of its
   * messages, then the bucket rows. What a room of the same name wrote after
   * `at` is newer than these deletes and stays. A message's own partitions
   * are deleted above `at` (their rows are stamped past the post's commit
   * horizon), so the messages of a room of that name created since are left
   * out by their ids: `reborn` says, after each page is read, when the room
   * now stored under the name was created (so a room created during the
   * cleanup is seen before any of its messages is dropped). `dropHeld` gets
   * each page's messages that hold a poll or files, and drops what they hold
   * in other tables before any of their rows goes: a cleanup cut short and
   * run again still finds them.
   */
  async dropRoom(
    roomName: string,
    at: WriteTimestamp,
    commitHorizonMs: number,
    reborn: () => Promise<Date | undefined>,
    dropHeld: (messages: DroppedMessage[]) => Promise<void>,
  ): Promise<void> {
    const buckets = (await this.db.execute(SELECT_ALL_ROOM_BUCKETS, [roomName])).rows.map((r) => r.time_bucket as number);
    for (const bucket of buckets) {
      let pageState: string | undefined;
      do {
        const rs = await this.db.execute(SELECT_AUTHORS_IN_BUCKET, [roomName, bucket], { fetchSize: Limits.room.cleanupFetchSize, pageState });
        const newRoomFrom = (await reborn())?.getTime() ?? Infinity;
        const rows = rs.rows.filter((r) => timeUuidDate(r.message_id.toString()).getTime() < newRoomFrom);
        const holding = rows
          .filter((r) => r.poll != null || (r.attachments?.length ?? 0) > 0)
          .map((r) => ({
            roomName,
            bucket,
            messageId: r.message_id.toString() as string,
            hasPoll: r.poll != null,
            attachments: ((r.attachments as Array<{ toString(): string }> | null) ?? []).map((id) => id.toString()),
          }));
        if (holding.length > 0) await dropHeld(holding);
        // Only messages that were edited, reacted to or replied to have partitions of their own.
        const parts = rows
          .filter((r) => r.version || r.reaction_kinds || r.last_reply_at)
          .flatMap((r) => {
            // Version rows are stamped past the post's commit horizon (message-edits.ts): reach above them.
            const partsAt = maxLong(at, copyTimestamp({ messageId: r.message_id.toString() }, Limits.room.edits.maxVersion + 1, commitHorizonMs));
            return DELETE_MESSAGE_PARTS.map((stmt) => ({ stmt, params: [partsAt, roomName, bucket, r.message_id] }));
          });
        await this.db.batchInChunks(parts, Limits.room.cleanupBatch);
        const deletes = rows
          .filter((r) => r.author && !r.system_message)
          .map((r) => ({
            stmt: DELETE_BY_AUTHOR,
            params: [at, fromUdt(r.author).login, monthOfDay(bucket), r.message_id],
          }));
        // Unlogged batches, each within one author partition: cheap, and every delete is idempotent.
        const byPartition = new Map<string, typeof deletes>();
        for (const d of deletes) {
          const key = `${d.params[1]}\u0000${d.params[2]}`;
          const group = byPartition.get(key);
          if (group) group.push(d);
          else byPartition.set(key, [d]);
        }
        for (const group of byPartition.values()) await this.db.batchInChunks(group, Limits.room.cleanupBatch);
        pageState = rs.pageState ?? undefined;
      } while (pageState);
      await this.db.execute(DELETE_ROOM_PARTITION, [at, roomName, bucket]);
    }
    await this.db.execute(DELETE_ROOM_BUCKETS, [at, roomName]);
  }
}
