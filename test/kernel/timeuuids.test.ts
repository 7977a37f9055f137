// The timeuuid generator and validator: every id that orders something in time.
import { describe, expect, it } from 'vitest';
import { bigIntOf, Long, TimeUuid } from '../../src/db/cassandra/client.js';
import { isTimeUuid, newTimeUuid, parseTimeUuid, timeMicros, timeTicks, timeUuidDate, timeUuidMs } from '../../src/timeuuids.js';
import fc from 'fast-check';

const order = (ids: InstanceType<typeof TimeUuid>[]) => ids.map((id) => BigInt(timeTicks(id).toString()));

describe('the one timeuuid generator', () => {
  it('keeps whole-microsecond ids in order past a full millisecond, borrowing the next one', () => {
    const at = new Date('2027-03-01T00:00:00.500Z');
    const ids = Array.from({ length: 1_500 }, () => newTimeUuid(at, 'microsecond'));
    const ticks = order(ids);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]!).toBeGreaterThan(ticks[i - 1]!);
    for (const id of ids) expect(timeTicks(id).toString()).toBe(String(BigInt(timeMicros(id)) * 10n));
    expect(ids.at(-1)!.getDate().getTime()).toBeGreaterThan(at.getTime());
  });

  it('orders tick and microsecond ids of one millisecond together, in the order they were made', () => {
    const at = new Date('2027-03-01T00:00:01.000Z');
    const ids = [newTimeUuid(at), newTimeUuid(at, 'microsecond'), newTimeUuid(at), newTimeUuid(at, 'microsecond')];
    const ticks = order(ids);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]!).toBeGreaterThan(ticks[i - 1]!);
    expect(timeTicks(ids[3]!).toString()).toBe(String(BigInt(timeMicros(ids[3]!)) * 10n));
  });

  it('never repeats an id when the clock goes back over milliseconds it already issued', () => {
    const at = new Date('2027-03-01T00:00:03.000Z');
    const before = Array.from({ length: 50 }, () => newTimeUuid(at).toString());
    const later = newTimeUuid(new Date(at.getTime() + 5)).toString();
    // The clock steps back (NTP, a VM resumed): the same millisecond is issued again from tick 0.
    const after = Array.from({ length: 50 }, () => newTimeUuid(at).toString());
    expect(new Set([...before, later, ...after]).size).toBe(101);
    // Ids of one process going forward share their node bits: the driver draws none per id.
    expect(new Set(before.map((id) => id.slice(19))).size).toBe(1);
  });
});

describe('the one timeuuid validator', () => {
  it('accepts version 1 in either case and nothing else', () => {
    const id = newTimeUuid(new Date('2027-03-01T00:00:02.000Z')).toString();
    expect(isTimeUuid(id)).toBe(true);
    expect(isTimeUuid(id.toUpperCase())).toBe(true);
    expect(parseTimeUuid(id.toUpperCase())?.toString()).toBe(id);
    for (const bad of ['0f8fad5b-d9cb-469f-a165-70867728950e', `${id}0`, id.slice(1), '', 'not-a-uuid', 42, null]) {
      expect(isTimeUuid(bad), String(bad)).toBe(false);
    }
  });
});

describe('reading a timeuuid time and a bigint without the driver', () => {
  it('reads the same millisecond as the driver from an id or its text, over the whole 60-bit range', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const buffer = Buffer.from(bytes);
        buffer[6] = (buffer[6]! & 0x0f) | 0x10; // version 1
        buffer[8] = (buffer[8]! & 0x3f) | 0x80; // RFC 4122 variant
        const id = new TimeUuid(buffer);
        const expected = id.getDate().getTime();
        expect(timeUuidMs(id)).toBe(expected);
        expect(timeUuidMs(id.toString())).toBe(expected);
        expect(timeUuidMs(id.toString().toUpperCase())).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
    for (const at of ['1970-01-01T00:00:00.000Z', '2026-11-25T23:59:59.999Z', '1582-10-15T00:00:00.000Z', '5000-01-01T00:00:00.000Z']) {
      const id = TimeUuid.fromDate(new Date(at), 9_999);
      expect(new Date(timeUuidMs(id)).toISOString()).toBe(at);
      expect(timeUuidDate(id.toString()).toISOString()).toBe(at);
    }
  });

  it('reads a Long as the bigint its text says', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => {
        expect(bigIntOf(Long.fromString(n.toString()))).toBe(n);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('message time uuids', () => {
  it('sort in the order they were made, even thousands within one millisecond', () => {
    const at = new Date('2025-06-01T12:00:00.000Z');
    const ids = Array.from({ length: 12_000 }, () => newTimeUuid(at));
    const key = (u: InstanceType<typeof TimeUuid>) => {
      const { date, ticks } = u.getDatePrecision();
      return BigInt(date.getTime()) * 10_000n + BigInt(ticks);
    };
    for (let i = 1; i < ids.length; i++) expect(key(ids[i]!)).toBeGreaterThan(key(ids[i - 1]!));
    expect(timeUuidDate(ids[0]!.toString()).toISOString()).toBe(at.toISOString());
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
