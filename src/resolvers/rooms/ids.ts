/**
 * Message ids and history cursors. A message id is opaque to clients but
 * holds everything needed to read the message back with one single-partition
 * query: its room, its day bucket and its timeuuid.
 */
import { badInput } from '../../errors.js';
import { dayBucket, isDayBucket, isMonthBucket } from '../../buckets.js';
import { decodeCursor, encodeCursor } from '../../pagination.js';
import { isTimeUuid, timeUuidDate } from '../../db/time-uuid.js';
import { isPossibleRoomName } from './validation.js';

export interface MessageKey {
  roomName: string;
  bucket: number;
  messageId: string;
}

const PREFIX = 'm1';

export function encodeMessageId(key: MessageKey): string {
  return Buffer.from(`${PREFIX}|${key.roomName}|${key.bucket}|${key.messageId}`).toString('base64url');
}

export function decodeMessageId(field: string, id: string): MessageKey {
  const parts = Buffer.from(id, 'base64url').toString('utf8').split('|');
  const [prefix, roomName, bucketText, messageId] = parts;
  const bucket = Number(bucketText);
  const valid =
    parts.length === 4 &&
    prefix === PREFIX &&
    isPossibleRoomName(roomName) &&
    isDayBucket(bucket) &&
    isTimeUuid(messageId) &&
    // The bucket is the message's own day: anything else was not made here.
    dayBucket(timeUuidDate(messageId)) === bucket;
  if (!valid) throw badInput(field, `${field} is not a message id`);
  return { roomName: roomName!, bucket, messageId: messageId! };
}

/** A position in a bucketed history: the bucket and the timeuuid of a message. */
export interface HistoryPosition {
  bucket: number;
  id: string;
  /**
   * Only on the cursor of a message that had not settled when it was served
   * (see catchUpSettleMs): the settled horizon then, in ms. Catching up from
   * such a cursor resumes from that horizon.
   */
  settled?: number;
}

export function encodeHistoryCursor(pos: HistoryPosition): string {
  return encodeCursor({ b: pos.bucket, t: pos.id, ...(pos.settled === undefined ? {} : { s: pos.settled }) });
}

export function decodeHistoryCursor(field: string, cursor: string, buckets: 'day' | 'month'): HistoryPosition {
  const isBucket = buckets === 'day' ? isDayBucket : isMonthBucket;
  const pos = decodeCursor(
    field,
    cursor,
    (p): p is { b: number; t: string; s?: number } =>
      isBucket(p.b) && isTimeUuid(p.t) && (p.s === undefined || (Number.isSafeInteger(p.s) && (p.s as number) >= 0)),
  );
  return { bucket: pos.b, id: pos.t, ...(pos.s === undefined ? {} : { settled: pos.s }) };
}

/** A position in the list of all rooms: the name of the room shown last (the list is in token order). */
export function encodeRoomsCursor(roomName: string): string {
  return encodeCursor({ r: roomName });
}

export function decodeRoomsCursor(field: string, cursor: string): string {
  return decodeCursor(field, cursor, (p): p is { r: string } => isPossibleRoomName(p.r)).r;
}
