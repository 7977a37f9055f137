/**
 * The records of the messenger and their rules: a direct message (its id's
 * time is its send time and fixes its month bucket), the key that names a
 * conversation, and one user's view of a conversation.
 */
import { monthBucket } from '../../buckets.js';
import type { TimeUuid } from '../../db/cassandra/client.js';

/** A direct message as served and as sent in inbox events. */
export interface DirectMessageRecord {
  /** A timeuuid (its time is the message time). */
  id: string;
  /** The month bucket (yyyyMM) of the message time: its partition within the conversation. */
  month: number;
  sender: string;
  recipient: string;
  content: string;
  createdAt: Date;
}

/** One user's view of one conversation. */
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

/** The key of the conversation between two logins: both in sorted order, as in the seed. */
export function conversationKey(a: string, b: string): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

/** A message with this id; its month and time follow from the id. */
export function directMessage(id: TimeUuid, sender: string, recipient: string, content: string): DirectMessageRecord {
  const createdAt = id.getDate();
  return { id: id.toString(), month: monthBucket(createdAt), sender, recipient, content, createdAt };
}
