/**
 * Message ids and history cursors. A message id is opaque to clients but
 * holds everything needed to read the message back with one single-partition
 * query: its room, its day bucket and its timeuuid. (History cursors are
 * shared with the messenger: see src/pagination.ts.)
 */
import { badInput } from '../../errors.js';
import { dayBucket, isDayBucket } from '../../buckets.js';
import { decodeCursor, encodeCursor } from '../../pagination.js';
import { isTimeUuid, timeUuidDate } from '../../timeuuids.js';
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
  // Lower case: the form ids are made and served in.
  return { roomName: roomName!, bucket, messageId: messageId!.toLowerCase() };
}

/** A position in the list of all rooms: the name of the room shown last (the list is in token order). */
export function encodeRoomsCursor(roomName: string): string {
  return encodeCursor({ r: roomName });
}

export function decodeRoomsCursor(field: string, cursor: string): string {
  return decodeCursor(field, cursor, (p): p is { r: string } => isPossibleRoomName(p.r)).r;
}
