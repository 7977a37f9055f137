/**
 * The messenger's rules: a direct message's id's time is its send time and
 * fixes its month bucket, and the key that names a conversation. The records
 * themselves live where their rows are read, in src/db/messenger/rows.ts.
 */
import { monthBucket } from '../../buckets.js';
import type { TimeUuid } from '../../db/cassandra/client.js';
import { isTimeUuid, timeUuidDate } from '../../timeuuids.js';
import type { DirectMessageRecord } from '../../db/messenger/rows.js';

/** The key of the conversation between two logins: both in sorted order, as in the seed. */
export function conversationKey(a: string, b: string): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

/** A direct message's key among all of them: its conversation's key and its own timeuuid ("a:b:<timeuuid>"). */
export function directMessageKey(a: string, b: string, id: string): string {
  return `${conversationKey(a, b)}:${id}`;
}

/** The parts of a direct message's key, or null when it cannot be one (logins hold no ':'). */
export function parseDirectMessageKey(key: string): { conversation: string; logins: [string, string]; id: string } | null {
  const [a, b, id, ...rest] = key.split(':');
  if (!a || !b || !id || rest.length > 0 || a >= b || !isTimeUuid(id)) return null;
  return { conversation: `${a}:${b}`, logins: [a, b], id: id.toLowerCase() };
}

/** A message with this id; its month and time follow from the id. */
export function directMessage(id: TimeUuid, sender: string, recipient: string, content: string): DirectMessageRecord {
  const createdAt = timeUuidDate(id);
  return { id: id.toString(), month: monthBucket(createdAt), sender, recipient, content, createdAt };
}
