/**
 * Storage of inboxes: one partition per user, one row per partner (the seed's
 * TalkLastMessages). The unread-count design is explained in
 * cql/003_messenger.cql; every write to `unread` and `last_message` carries a
 * write timestamp taken from a message time, never from a server clock.
 */
import { Limits } from '../../limits.js';
import { bigIntOf, cql, type Database, type Row, type Statement, TimeUuid } from '../cassandra/client.js';
import type { DirectMessageRow, InboxRow } from './rows.js';
import { monthBucket } from '../../buckets.js';
import { timeMicros, timeTicks, timeUuidDate } from '../cassandra/timeuuids.js';

// Last-write-wins by message time: see the direct_message_summary type in cql/003.
const SENDER_ROW = cql(
  'UPDATE inbox USING TIMESTAMP ? SET last_message = ?, months = months + ? WHERE owner = ? AND partner = ?',
  { idempotent: true },
);
const RECIPIENT_ROW = cql(
  'UPDATE inbox USING TIMESTAMP ? SET last_message = ?, months = months + ?, unread = unread + ? WHERE owner = ? AND partner = ?',
  { idempotent: true },
);
// The read: a collection deletion at the read point's timestamp removes exactly
// the unread ids sent at or before it, whatever arrives meanwhile.
const DELETE_READ_UNREAD = cql('DELETE unread FROM inbox USING TIMESTAMP ? WHERE owner = ? AND partner = ?', {
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

// collection_count/min/max run on the node: only numbers cross the wire, never the unread set.
const COLUMNS = `partner, last_message, collection_count(unread) AS unread_count, collection_min(unread) AS first_unread,
  collection_max(unread) AS newest_unread, months, read_up_to, read_at, partner_read_up_to, partner_read_at`;
const SELECT_ALL = cql(`SELECT ${COLUMNS} FROM inbox WHERE owner = ?`, { idempotent: true });
const SELECT_ONE = cql(`SELECT ${COLUMNS} FROM inbox WHERE owner = ? AND partner = ?`, { idempotent: true });

/** The two inbox writes of a send, for the send's batch (src/db/messenger/direct-messages.ts). */
export function inboxWritesForSend(id: TimeUuid, message: DirectMessageRow): Array<{ stmt: Statement; params: unknown[] }> {
  const at = timeMicros(id);
  const summary = { time_ticks: timeTicks(id), id, sender: message.sender, content: message.content };
  const months = [message.month];
  return [
    { stmt: SENDER_ROW, params: [at, summary, months, message.sender, message.recipient] },
    { stmt: RECIPIENT_ROW, params: [at, summary, months, [id], message.recipient, message.sender] },
  ];
}

/** A conversation without messages yet (no inbox row). */
export function emptyConversation(owner: string, partner: string): InboxRow {
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
function lastMessageOf(owner: string, partner: string, last: LastMessageValue): DirectMessageRow {
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

function toConversation(owner: string, row: Row): InboxRow {
  const partner = row.partner as string;
  const last = row.last_message as LastMessageValue | null;
  const lastMessage = last ? lastMessageOf(owner, partner, last) : null;
  const months = [...((row.months as Set<number> | null) ?? [])].sort((a, b) => b - a);
  return {
    owner,
    partner,
    lastMessage,
    lastMessageTicks: last ? bigIntOf(last.time_ticks) : null,
    unreadCount: (row.unread_count as number | null) ?? 0,
    firstUnreadAt: row.first_unread ? timeUuidDate(row.first_unread as TimeUuid) : null,
    newestUnread: (row.newest_unread as TimeUuid | null) ?? null,
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
   * Every conversation of `owner`: ONE partition read. (An inbox larger than
   * the fetch size is paged by the driver within that same partition.)
   */
  async all(owner: string): Promise<InboxRow[]> {
    const conversations: InboxRow[] = [];
    let pageState: string | undefined;
    do {
      const rs = await this.db.execute(SELECT_ALL, [owner], { fetchSize: Limits.messenger.inboxFetchSize, pageState });
      for (const row of rs.rows) conversations.push(toConversation(owner, row));
      pageState = rs.pageState ?? undefined;
    } while (pageState);
    return conversations;
  }

  /** One conversation of `owner`; empty when the two never wrote to each other. */
  async one(owner: string, partner: string): Promise<InboxRow> {
    const row = await this.db.first(SELECT_ONE, [owner, partner]);
    return row ? toConversation(owner, row) : emptyConversation(owner, partner);
  }

  /**
   * Marks every message of `partner` to `owner` sent at or before `readPoint`
   * as read, records the read point in the owner's row and the receipt in the
   * partner's: one logged batch of 3 statements, all at the read point's
   * timestamp (so the batch is idempotent and read points only move forward).
   */
  async markRead(owner: string, partner: string, readPoint: TimeUuid, readAt: Date): Promise<void> {
    const at = timeMicros(readPoint);
    await this.db.batch([
      { stmt: DELETE_READ_UNREAD, params: [at, owner, partner] },
      { stmt: RECORD_MY_READ, params: [at, readPoint, readAt, owner, partner] },
      { stmt: RECORD_PARTNER_READ, params: [at, readPoint, readAt, partner, owner] },
    ]);
  }
}
