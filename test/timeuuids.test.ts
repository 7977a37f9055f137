import { describe, expect, it } from 'vitest';
import { TimeUuid } from '../src/db/cassandra/client.js';
import { isTimeUuid, newTimeUuid, parseTimeUuid, timeMicros, timeTicks } from '../src/db/cassandra/timeuuids.js';

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
