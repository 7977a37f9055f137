/** A direct message as stored and served, and the keys derived from it. */
import { monthBucket } from '../../buckets.js';
import type { TimeUuid } from '../cassandra/client.js';

export interface DirectMessageRecord {
  /** A timeuuid (its time is the message time). */
  id: string;
  /** The conversation key, "smaller:bigger". */
  conversation: string;
  /** The month bucket (yyyyMM) of the message time: its partition. */
  month: number;
  sender: string;
  recipient: string;
  content: string;
  createdAt: Date;
}

/** The key of the conversation between two logins: both in sorted order, as in the seed. */
export function conversationKey(a: string, b: string): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

/** The record of a message with this id; conversation, month and time follow from it. */
export function directMessage(id: TimeUuid, sender: string, recipient: string, content: string): DirectMessageRecord {
  const createdAt = id.getDate();
  return {
    id: id.toString(),
    conversation: conversationKey(sender, recipient),
    month: monthBucket(createdAt),
    sender,
    recipient,
    content,
    createdAt,
  };
}
