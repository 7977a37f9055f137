// Day and month buckets: the partitions time is cut into.
import { describe, expect, it } from 'vitest';
import { dayBucket, monthBucket, nextMonth, parseMonth, previousMonth, dayBucketStart, isDayBucket, isMonthBucket, monthOfDay } from '../../src/buckets.js';
describe('buckets', () => {
  it('uses UTC days and months', () => {
    expect(dayBucket(new Date('2026-11-22T23:59:59.999Z'))).toBe(20261122);
    expect(dayBucket(new Date('2026-11-23T00:00:00Z'))).toBe(20261123);
    expect(monthBucket(new Date('2026-01-01T00:00:00Z'))).toBe(202601);
  });
  it('steps months across years', () => {
    expect(previousMonth(202601)).toBe(202512);
    expect(nextMonth(202512)).toBe(202601);
    expect(parseMonth('2026-11')).toBe(202611);
    expect(parseMonth('2026-13')).toBeUndefined();
  });
});

describe('day buckets', () => {
  it('round-trips a bucket to its UTC midnight and rejects days that do not exist', () => {
    expect(dayBucketStart(20240229).toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(dayBucket(dayBucketStart(20251231))).toBe(20251231);
    expect(isDayBucket(20240229)).toBe(true);
    expect(isDayBucket(20250229)).toBe(false);
    expect(isDayBucket(20251301)).toBe(false);
    expect(isDayBucket('20250101')).toBe(false);
    expect(isMonthBucket(202512)).toBe(true);
    expect(isMonthBucket(202513)).toBe(false);
    // A day's month bucket is the month bucket of any moment of that day.
    const lastMoment = new Date('2025-12-31T23:59:59.999Z');
    expect(monthOfDay(dayBucket(lastMoment))).toBe(monthBucket(lastMoment));
    expect(monthOfDay(20260101)).toBe(202601);
  });
});
