/**
 * Storage of direct messages: the direct_messages table (one partition per
 * conversation and month) and the send, which writes the message and both
 * inbox rows in one logged batch. See cql/003_messenger.cql for the design.
 */
import { walkBuckets, type BucketedSource } from '../cassandra/bucket-walk.js';
import { cql, type Database, type Row, TimeUuid } from '../cassandra/client.js';
import { timeUuidDate } from '../../timeuuids.js';
import { monthBucket } from '../../buckets.js';
import { inboxWritesForSend } from './inbox.js';
import type { DirectMessageRecord } from './rows.js';
import { lookAhead, pageOf, type Page } from '../cassandra/page.js';

const INSERT = cql(
  'INSERT INTO direct_messages (conversation, month, id, sender, recipient, content, forwarded_from) VALUES (?, ?, ?, ?, ?, ?, ?)',
  { idempotent: true },
);
const SELECT_NEWEST = cql(
  'SELECT id, sender, recipient, content, forwarded_from FROM direct_messages WHERE conversation = ? AND month = ? LIMIT ?',
  { idempotent: true },
);
const SELECT_ONE = cql(
  'SELECT id, sender, recipient, content, forwarded_from FROM direct_messages WHERE conversation = ? AND month = ? AND id = ?',
  { idempotent: true },
);
// node(id:)'s batches: the messages of one conversation and month by id.
const SELECT_MANY = cql(
  'SELECT id, sender, recipient, content, forwarded_from FROM direct_messages WHERE conversation = ? AND month = ? AND id IN ?',
  { idempotent: true },
);
const SELECT_OLDER_THAN = cql(
  'SELECT id, sender, recipient, content, forwarded_from FROM direct_messages WHERE conversation = ? AND month = ? AND id < ? LIMIT ?',
  { idempotent: true },
);

/** A row of the month partition it was read from; the message time is its timeuuid's. */
const toMessage = (month: number, row: Row): DirectMessageRecord => ({
  id: row.id.toString(),
  month,
  sender: row.sender,
  recipient: row.recipient,
  content: row.content,
  createdAt: timeUuidDate(row.id as TimeUuid),
  forwardedFrom: (row.forwarded_from as string | null) ?? null,
});

export class DirectMessageStore {
  constructor(private readonly db: Database) {}

  /**
   * One logged batch of 4 statements and no read: the message, the sender's
   * inbox row, the recipient's, and the recipient's unread row. Every
   * statement is idempotent (explicit write timestamps, set additions), so
   * the driver may retry the batch.
   */
  async send(conversation: string, message: DirectMessageRecord): Promise<void> {
    const id = TimeUuid.fromString(message.id);
    await this.db.batch([
      {
        stmt: INSERT,
        // forwarded_from bound unset when absent: a bound null would write a tombstone.
        params: [conversation, message.month, id, message.sender, message.recipient, message.content, message.forwardedFrom ?? undefined],
      },
      ...inboxWritesForSend(id, message),
    ]);
  }

  /** One message of a conversation by its id (its month follows from the id), or null. */
  async byId(conversation: string, id: string): Promise<DirectMessageRecord | null> {
    const month = monthBucket(timeUuidDate(id));
    const row = (await this.db.execute(SELECT_ONE, [conversation, month, TimeUuid.fromString(id)])).first();
    return row ? toMessage(month, row) : null;
  }

  /**
   * Messages of one conversation by id, by id (those it lacks are absent): one read per month partition the ids
   * fall in, all at once. The caller bounds the ids (its loader's batch).
   */
  async byIds(conversation: string, ids: readonly string[]): Promise<Map<string, DirectMessageRecord>> {
    const byMonth = new Map<number, TimeUuid[]>();
    for (const id of new Set(ids)) {
      const month = monthBucket(timeUuidDate(id));
      byMonth.set(month, [...(byMonth.get(month) ?? []), TimeUuid.fromString(id)]);
    }
    const found = new Map<string, DirectMessageRecord>();
    await Promise.all(
      [...byMonth].map(async ([month, inMonth]) => {
        for (const row of (await this.db.execute(SELECT_MANY, [conversation, month, inMonth])).rows) {
          const message = toMessage(month, row);
          found.set(message.id, message);
        }
      }),
    );
    return found;
  }

  /** Up to `limit` messages of one month bucket, newest first, older than `before` when given. */
  async page(conversation: string, month: number, limit: number, before?: TimeUuid): Promise<DirectMessageRecord[]> {
    const rs = before
      ? await this.db.execute(SELECT_OLDER_THAN, [conversation, month, before, limit])
      : await this.db.execute(SELECT_NEWEST, [conversation, month, limit]);
    return rs.rows.map((row) => toMessage(month, row));
  }

  /**
   * Up to `want` messages of a conversation, newest first, strictly older than
   * `from` when given, across `months`, newest first (the month buckets its
   * inbox row lists, as ConversationRecord.months gives them: months without
   * messages cost nothing).
   */
  async history(
    conversation: string,
    months: readonly number[],
    from: { bucket: number; id: string } | null,
    size: number,
  ): Promise<Page<DirectMessageRecord>> {
    const source: BucketedSource<DirectMessageRecord> = {
      buckets: async (lo, hi, _dir, limit) => months.filter((m) => m >= lo && m <= hi).slice(0, limit),
      read: async (month, _dir, after, limit) => {
        const rows = await this.page(conversation, month, limit, after === null ? undefined : TimeUuid.fromString(after));
        return { rows, fetched: rows.length, lastId: rows.at(-1)?.id ?? null };
      },
    };
    return pageOf(await walkBuckets(source, { dir: 'older', from, lo: 0, hi: Number.MAX_SAFE_INTEGER, want: lookAhead(size) }), size);
  }
}
