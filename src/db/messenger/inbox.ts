/**
 * Storage of inboxes: one partition per user, one row per partner (the seed's
 * TalkLastMessages), and the user's unread messages, one row each
 * (inbox_unread). The unread-count design is explained in
 * cql/003_messenger.cql and cql/015_inbox_unread_rows.cql; every write of an
 * unread id and of `last_message` carries a write timestamp taken from a
 * message time, never from a server clock.
 */
import { Limits } from '../../limits.js';
import { bigIntOf, cql, type Database, type Row, type Statement, TimeUuid } from '../cassandra/client.js';
import type { DirectMessageRecord, ConversationRecord } from './rows.js';
import { monthBucket } from '../../buckets.js';
import { timeMicros, timeTicks, timeUuidDate } from '../../timeuuids.js';

// Each of the two people's rows: last-write-wins by message time (see the direct_message_summary type in cql/003).
const CONVERSATION_ROW = cql(
  'UPDATE inbox USING TIMESTAMP ? SET last_message = ?, months = months + ? WHERE owner = ? AND partner = ?',
  { idempotent: true },
);
const UNREAD_ROW = cql('INSERT INTO inbox_unread (owner, partner, id) VALUES (?, ?, ?) USING TIMESTAMP ?', {
  idempotent: true,
});
// The read: one range tombstone at the read point's timestamp removes exactly
// the unread ids at or before it, whatever arrives meanwhile.
const DELETE_READ_ROWS = cql('DELETE FROM inbox_unread USING TIMESTAMP ? WHERE owner = ? AND partner = ? AND id <= ?', {
  idempotent: true,
});
// Ids sent before cql/015 live in the row's set; a collection deletion at the
// same timestamp clears those the read point covers (it costs nothing once empty).
const DELETE_READ_LEGACY_SET = cql('DELETE unread FROM inbox USING TIMESTAMP ? WHERE owner = ? AND partner = ?', {
  idempotent: true,
});
// Read points written at their own time: a stale concurrent read never moves one back.
const RECORD_MY_READ = cql(
  'UPDATE inbox USING TIMESTAMP ? SET read_up_to = ?, read_at = ? WHERE owner = ? AND partner = ?',
  { idempotent: true },
);
const RECORD_PARTNER_READ = cql(
  'UPDATE inbox USING TIMESTAMP ? SET partner_read_up_to = ?, partner_read_at = ? WHERE owner = ? AND partner = ?',
  { idempotent: true },
);

// Counts, first and newest are computed on the node: only numbers cross the wire, never the unread ids.
// The set columns are those of ids sent before cql/015 (empty once read).
const COLUMNS = `partner, last_message, collection_count(unread) AS unread_count, collection_min(unread) AS first_unread,
  collection_max(unread) AS newest_unread, months, read_up_to, read_at, partner_read_up_to, partner_read_at`;
const SELECT_ALL = cql(`SELECT ${COLUMNS} FROM inbox WHERE owner = ?`, { idempotent: true });
const SELECT_ONE = cql(`SELECT ${COLUMNS} FROM inbox WHERE owner = ? AND partner = ?`, { idempotent: true });
// node(id:)'s batches: one owner's rows for many partners (partner is the first clustering column of both tables).
const SELECT_SOME = cql(`SELECT ${COLUMNS} FROM inbox WHERE owner = ? AND partner IN ?`, { idempotent: true });
const UNREAD_COLUMNS = 'COUNT(*) AS unread_count, MIN(id) AS first_unread, MAX(id) AS newest_unread';
const SELECT_UNREAD_ALL = cql(`SELECT partner, ${UNREAD_COLUMNS} FROM inbox_unread WHERE owner = ? GROUP BY partner`, {
  idempotent: true,
});
const SELECT_UNREAD_SOME = cql(`SELECT partner, ${UNREAD_COLUMNS} FROM inbox_unread WHERE owner = ? AND partner IN ? GROUP BY partner`, {
  idempotent: true,
});
const SELECT_UNREAD_ONE = cql(`SELECT ${UNREAD_COLUMNS} FROM inbox_unread WHERE owner = ? AND partner = ?`, {
  idempotent: true,
});

/** What is unread in one conversation: how many, the oldest and the newest. */
interface Unread {
  count: number;
  first: TimeUuid | null;
  newest: TimeUuid | null;
}

const NOTHING_UNREAD: Unread = { count: 0, first: null, newest: null };

/** The unread columns of a row of either query (both name them alike). */
function unreadOf(row: Row): Unread {
  return {
    // COUNT(*) answers a bigint (a Long, whose decimal text Number reads), collection_count an int.
    count: Number(row.unread_count ?? 0),
    first: asTimeUuid(row.first_unread),
    newest: asTimeUuid(row.newest_unread),
  };
}

/**
 * MIN and MAX of a timeuuid column: Cassandra 5 types their result as the custom
 * LegacyTimeUUIDType, which the driver hands over as the 16 raw bytes.
 */
const asTimeUuid = (value: unknown): TimeUuid | null =>
  value == null ? null : value instanceof TimeUuid ? value : new TimeUuid(value as Buffer);

/** The id of the two sent at the later (or, with `earlier`, the earlier) time. */
function pick(a: TimeUuid | null, b: TimeUuid | null, earlier: boolean): TimeUuid | null {
  if (!a || !b) return a ?? b;
  return timeTicks(a).lessThan(timeTicks(b)) === earlier ? a : b;
}

/** The ids left in the row's set (sent before cql/015) beside the unread rows. */
function bothUnread(legacy: Unread, rows: Unread): Unread {
  return { count: legacy.count + rows.count, first: pick(legacy.first, rows.first, true), newest: pick(legacy.newest, rows.newest, false) };
}

/** The inbox writes of a send (both people's rows, the recipient's unread row), for the send's batch (direct-messages.ts). */
export function inboxWritesForSend(id: TimeUuid, message: DirectMessageRecord): Array<{ stmt: Statement; params: unknown[] }> {
  const at = timeMicros(id);
  const summary = { time_ticks: timeTicks(id), id, sender: message.sender, content: message.content };
  const months = [message.month];
  return [
    { stmt: CONVERSATION_ROW, params: [at, summary, months, message.sender, message.recipient] },
    { stmt: CONVERSATION_ROW, params: [at, summary, months, message.recipient, message.sender] },
    { stmt: UNREAD_ROW, params: [message.recipient, message.sender, id, at] },
  ];
}

/** A conversation without messages yet (no inbox row). */
export function emptyConversation(owner: string, partner: string): ConversationRecord {
  return {
    owner,
    partner,
    lastMessage: null,
    lastMessageTicks: null,
    unreadCount: 0,
    firstUnreadAt: null,
    newestUnread: null,
    months: [],
    readUpTo: null,
    readAt: null,
    partnerReadUpTo: null,
    partnerReadAt: null,
  };
}

interface LastMessageValue {
  time_ticks: { high: number; low: number };
  id: TimeUuid;
  sender: string;
  content: string;
}

/** The row's last_message as a message: the recipient is whichever of the two did not send it. */
function lastMessageOf(owner: string, partner: string, last: LastMessageValue): DirectMessageRecord {
  const sentAt = timeUuidDate(last.id);
  return {
    id: last.id.toString(),
    month: monthBucket(sentAt),
    sender: last.sender,
    recipient: last.sender === owner ? partner : owner,
    content: last.content,
    createdAt: sentAt,
  };
}

function toConversation(owner: string, row: Row, unreadRows: Unread): ConversationRecord {
  const partner = row.partner as string;
  const last = row.last_message as LastMessageValue | null;
  const lastMessage = last ? lastMessageOf(owner, partner, last) : null;
  const months = [...((row.months as Set<number> | null) ?? [])].sort((a, b) => b - a);
  const unread = bothUnread(unreadOf(row), unreadRows);
  return {
    owner,
    partner,
    lastMessage,
    lastMessageTicks: last ? bigIntOf(last.time_ticks) : null,
    unreadCount: unread.count,
    firstUnreadAt: unread.first ? timeUuidDate(unread.first) : null,
    newestUnread: unread.newest,
    months,
    readUpTo: (row.read_up_to as TimeUuid | null)?.toString() ?? null,
    readAt: (row.read_at as Date | null) ?? null,
    partnerReadUpTo: (row.partner_read_up_to as TimeUuid | null)?.toString() ?? null,
    partnerReadAt: (row.partner_read_at as Date | null) ?? null,
  };
}

export class InboxStore {
  constructor(private readonly db: Database) {}

  /**
   * Every conversation of `owner`: ONE read of the inbox partition, and beside
   * it one of the owner's unread partition, counted per partner on the node.
   * (Either larger than the fetch size is paged within that same partition.)
   */
  async all(owner: string): Promise<ConversationRecord[]> {
    const [rows, unreadRows] = await Promise.all([this.wholePartition(SELECT_ALL, owner), this.wholePartition(SELECT_UNREAD_ALL, owner)]);
    const unreadByPartner = new Map(unreadRows.map((row) => [row.partner as string, unreadOf(row)]));
    return rows.map((row) => toConversation(owner, row, unreadByPartner.get(row.partner as string) ?? NOTHING_UNREAD));
  }

  /** One conversation of `owner`; empty when the two never wrote to each other. */
  async one(owner: string, partner: string): Promise<ConversationRecord> {
    const [row, unread] = await Promise.all([this.db.first(SELECT_ONE, [owner, partner]), this.db.first(SELECT_UNREAD_ONE, [owner, partner])]);
    return row ? toConversation(owner, row, unread ? unreadOf(unread) : NOTHING_UNREAD) : emptyConversation(owner, partner);
  }

  /**
   * The conversations of `owner` with each of `partners`, by partner, as one() answers each: one read of the inbox
   * rows and one of the unread counts, whatever the number of partners (the caller bounds it: its loader's batch).
   */
  async some(owner: string, partners: readonly string[]): Promise<Map<string, ConversationRecord>> {
    const wanted = [...new Set(partners)];
    if (wanted.length === 0) return new Map();
    const fetchSize = Limits.messenger.inboxFetchSize;
    const [rows, unreadRows] = await Promise.all([
      this.db.allRows(SELECT_SOME, [owner, wanted], fetchSize),
      this.db.allRows(SELECT_UNREAD_SOME, [owner, wanted], fetchSize),
    ]);
    const unreadByPartner = new Map(unreadRows.map((row) => [row.partner as string, unreadOf(row)]));
    const found = new Map(rows.map((row) => [row.partner as string, toConversation(owner, row, unreadByPartner.get(row.partner as string) ?? NOTHING_UNREAD)]));
    return new Map(wanted.map((partner) => [partner, found.get(partner) ?? emptyConversation(owner, partner)]));
  }

  private wholePartition(stmt: Statement, owner: string): Promise<Row[]> {
    return this.db.allRows(stmt, [owner], Limits.messenger.inboxFetchSize);
  }

  /**
   * Marks every message of `partner` to `owner` sent at or before `readPoint`
   * as read, records the read point in the owner's row and the receipt in the
   * partner's: one logged batch of 4 statements, all at the read point's
   * timestamp (so the batch is idempotent and read points only move forward).
   */
  async markRead(owner: string, partner: string, readPoint: TimeUuid, readAt: Date): Promise<void> {
    const at = timeMicros(readPoint);
    await this.db.batch([
      { stmt: DELETE_READ_ROWS, params: [at, owner, partner, readPoint] },
      { stmt: DELETE_READ_LEGACY_SET, params: [at, owner, partner] },
      { stmt: RECORD_MY_READ, params: [at, readPoint, readAt, owner, partner] },
      { stmt: RECORD_PARTNER_READ, params: [at, readPoint, readAt, partner, owner] },
    ]);
  }
}
