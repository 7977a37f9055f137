import { describe, expect, it } from 'vitest';
import { conversationKey, directMessage } from '../../src/resolvers/messenger/model.js';
import { TimeUuid } from '../../src/db/cassandra/client.js';
import { newTimeUuid, parseTimeUuid, timeMicros, timeTicks } from '../../src/timeuuids.js';

describe('conversation keys', () => {
  it('are the two logins in sorted order, whoever sends', () => {
    expect(conversationKey('bob', 'alice')).toBe('alice:bob');
    expect(conversationKey('alice', 'bob')).toBe('alice:bob');
  });
  it('put a message in the month bucket of its time', () => {
    const m = directMessage(newTimeUuid(new Date('2025-12-31T23:59:59.999Z'), 'microsecond'), 'zed', 'amy', 'hi');
    expect(m).toMatchObject({ month: 202512, sender: 'zed', recipient: 'amy' });
    expect(conversationKey(m.sender, m.recipient)).toBe('amy:zed');
  });
});

describe('message ids', () => {
  it('give ids made in one millisecond successive whole microseconds, in order', () => {
    const at = new Date('2026-06-01T00:00:00.123Z');
    const ids = Array.from({ length: 5 }, () => newTimeUuid(at, 'microsecond'));
    const micros = ids.map(timeMicros);
    // A random start in the first half of the millisecond (instances rarely collide), then successive.
    expect(micros[0]! % 1000).toBeLessThan(500);
    expect(micros.map((m) => m - micros[0]!)).toEqual([0, 1, 2, 3, 4]);
    for (const id of ids) {
      expect(id.getDate().getTime()).toBe(at.getTime());
      // Whole microseconds: ticks (100 ns) are exactly ten per microsecond.
      expect(timeTicks(id).toString()).toBe(String(BigInt(timeMicros(id)) * 10n));
    }
  });
  it('restart the microseconds in a new millisecond', () => {
    const id = newTimeUuid(new Date('2026-06-01T00:00:00.124Z'), 'microsecond');
    const offset = timeMicros(id) - Date.parse('2026-06-01T00:00:00.124Z') * 1000;
    expect(offset).toBeGreaterThanOrEqual(0);
    expect(offset).toBeLessThan(500);
  });
  it('parse only time-based UUIDs', () => {
    const id = TimeUuid.now();
    expect(parseTimeUuid(id.toString())?.equals(id)).toBe(true);
    expect(parseTimeUuid('0f8fad5b-d9cb-469f-a165-70867728950e')).toBeUndefined(); // version 4
    expect(parseTimeUuid('not-a-uuid')).toBeUndefined();
    expect(parseTimeUuid('')).toBeUndefined();
  });
});
