/**
 * The messenger's rows as the stores return them; the resolvers serve them as
 * they are (src/resolvers/messenger/model.ts names them as records).
 */
import type { TimeUuid } from '../cassandra/client.js';

/** A stored direct message; the conversation key is the caller's, as the partition it read. */
export interface DirectMessageRow {
  id: string;
  month: number;
  sender: string;
  recipient: string;
  content: string;
  createdAt: Date;
}

/** One user's row of one conversation (the resolvers' ConversationRecord). */
export interface InboxRow {
  owner: string;
  partner: string;
  lastMessage: DirectMessageRow | null;
  /** The last message's time in 100 ns ticks (sorts the inbox exactly); null without messages. */
  lastMessageTicks: bigint | null;
  unreadCount: number;
  firstUnreadAt: Date | null;
  /** The newest unread message: the read point a markConversationRead would take. */
  newestUnread: TimeUuid | null;
  /** Month buckets holding this conversation's messages, newest first. */
  months: number[];
  readUpTo: string | null;
  readAt: Date | null;
  partnerReadUpTo: string | null;
  partnerReadAt: Date | null;
}
