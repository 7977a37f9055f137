/**
 * The records of the messenger and their rules: a direct message (its id's
 * time is its send time and fixes its month bucket), the key that names a
 * conversation, and one user's view of a conversation.
 */
import { monthBucket } from '../../buckets.js';
import type { TimeUuid } from '../../db/cassandra/client.js';
import { timeUuidDate } from '../../db/cassandra/timeuuids.js';
import type { DirectMessageRow, InboxRow } from '../../db/messenger/rows.js';

/**
 * A direct message as served and as sent in inbox events: the stored row as
 * it is (the conversation key is not in it; conversationKey derives it).
 */
export type DirectMessageRecord = DirectMessageRow;

/** One user's view of one conversation: that user's inbox row. */
export type ConversationRecord = InboxRow;

/** The key of the conversation between two logins: both in sorted order, as in the seed. */
export function conversationKey(a: string, b: string): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

/** A message with this id; its month and time follow from the id. */
export function directMessage(id: TimeUuid, sender: string, recipient: string, content: string): DirectMessageRecord {
  const createdAt = timeUuidDate(id);
  return { id: id.toString(), month: monthBucket(createdAt), sender, recipient, content, createdAt };
}
