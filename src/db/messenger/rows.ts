/**
 * The messenger's records, as the stores return them and the resolvers serve
 * them.
 */
import type { TimeUuid } from '../cassandra/client.js';

/** A stored direct message; the conversation key is the caller's, as the partition it read. */
export interface DirectMessageRecord {
  id: string;
  month: number;
  sender: string;
  recipient: string;
  content: string;
  createdAt: Date;
  /** For a forwarded message, the id (as the API gives it) of the room message it copies. */
  forwardedFrom?: string | null;
}

/** One user's view of one conversation: that user's inbox row. */
export interface ConversationRecord {
  owner: string;
  partner: string;
  lastMessage: DirectMessageRecord | null;
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
