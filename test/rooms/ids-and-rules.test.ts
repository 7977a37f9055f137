// Room message ids and history cursors, and the rooms' input rules.
import { describe, expect, it } from 'vitest';
import { newTimeUuid } from '../../src/timeuuids.js';
import { decodeMessageId, encodeMessageId } from '../../src/resolvers/rooms/ids.js';
import { decodeHistoryCursor, encodeHistoryCursor } from '../../src/pagination.js';
import { validBanner, validRoomName } from '../../src/resolvers/rooms/validation.js';
import { validClientId } from '../../src/validation.js';
describe('message ids and cursors', () => {
  it('round-trip, and refuse anything not made here', () => {
    const messageId = newTimeUuid(new Date('2025-06-01T12:00:00Z')).toString();
    const key = { roomName: 'games', bucket: 20250601, messageId };
    expect(decodeMessageId('id', encodeMessageId(key))).toEqual(key);
    const forge = (s: string) => Buffer.from(s).toString('base64url');
    for (const bad of [
      'x',
      forge(`m1|games|20250602|${messageId}`), // bucket is not the message's day
      forge(`m1|Games!|20250601|${messageId}`),
      forge(`m2|games|20250601|${messageId}`),
      forge(`m1|games|20250601|not-a-uuid`),
      forge(`m1|games|20250601|${messageId}|extra`),
    ]) {
      expect(() => decodeMessageId("id", bad), Buffer.from(bad, "base64url").toString()).toThrow(/id is not a message id/);
    }
    const cursor = encodeHistoryCursor({ bucket: 20250601, id: messageId });
    expect(decodeHistoryCursor('after', cursor, 'day')).toEqual({ bucket: 20250601, id: messageId });
    expect(() => decodeHistoryCursor('after', cursor, 'month')).toThrow(/after is not a valid cursor/);
    // A cursor of a message that had not settled carries the settled horizon of its page.
    const marked = encodeHistoryCursor({ bucket: 20250601, id: messageId, settled: 1_748_779_200_000 });
    expect(decodeHistoryCursor('before', marked, 'day')).toEqual({ bucket: 20250601, id: messageId, settled: 1_748_779_200_000 });
    for (const s of [-1, 1.5, '1', null]) {
      const forged = Buffer.from(JSON.stringify({ v: 1, b: 20250601, t: messageId, s })).toString('base64url');
      expect(() => decodeHistoryCursor('before', forged, 'day'), String(s)).toThrow(/before is not a valid cursor/);
    }
  });
});

describe('room input rules', () => {
  it('normalizes names to lowercase and trims banners', () => {
    expect(validRoomName('name', '  Games.Room_1-b ')).toBe('games.room_1-b');
    expect(() => validRoomName('name', '-games')).toThrow(/must start with a letter or digit/);
    expect(validBanner('b', '   ')).toBeNull();
    expect(validBanner('b', ' hi ')).toBe('hi');
    expect(validClientId('c', undefined)).toBeNull();
    expect(() => validClientId('c', 'tab\there')).toThrow(/control characters/);
  });
});
