/**
 * Time-bucket maths, in one place. Buckets bound partition size: a room's
 * messages are split by UTC day, a conversation's by UTC month.
 */

/** yyyyMMdd of the UTC day, e.g. 20261122. */
export function dayBucket(at: Date): number {
  return at.getUTCFullYear() * 10_000 + (at.getUTCMonth() + 1) * 100 + at.getUTCDate();
}

/** yyyyMM of the UTC month, e.g. 202611. */
export function monthBucket(at: Date): number {
  return at.getUTCFullYear() * 100 + (at.getUTCMonth() + 1);
}

/** The month bucket holding a day bucket (20261122 → 202611). */
export function monthOfDay(day: number): number {
  return Math.floor(day / 100);
}

/** "2026-11" → 202611; undefined when malformed. */
export function parseMonth(text: string): number | undefined {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(text);
  return m ? Number(m[1]) * 100 + Number(m[2]) : undefined;
}

/** The month bucket before `bucket` (202601 → 202512). */
export function previousMonth(bucket: number): number {
  const year = Math.floor(bucket / 100);
  const month = bucket % 100;
  return month === 1 ? (year - 1) * 100 + 12 : bucket - 1;
}

/** The month bucket after `bucket` (202512 → 202601). */
export function nextMonth(bucket: number): number {
  const year = Math.floor(bucket / 100);
  const month = bucket % 100;
  return month === 12 ? (year + 1) * 100 + 1 : bucket + 1;
}

/** yyyyMMddHH of the UTC hour, e.g. 2026112223 (still fits an int). */
export function hourBucket(at: Date): number {
  return dayBucket(at) * 100 + at.getUTCHours();
}

/** Every hour bucket from `from` to `to`, inclusive, oldest first. */
export function hourBucketsBetween(from: Date, to: Date): number[] {
  const out: number[] = [];
  const start = Math.floor(from.getTime() / 3_600_000) * 3_600_000;
  for (let t = start; t <= to.getTime(); t += 3_600_000) out.push(hourBucket(new Date(t)));
  return out;
}

/** The UTC midnight that starts a day bucket (20261122 → 2026-11-22T00:00:00Z). */
export function dayBucketStart(bucket: number): Date {
  return new Date(Date.UTC(Math.floor(bucket / 10_000), (monthOfDay(bucket) % 100) - 1, bucket % 100));
}

/** A day bucket is a real calendar day (rejects 20261131, 2026001). */
export function isDayBucket(bucket: unknown): bucket is number {
  return Number.isInteger(bucket) && dayBucket(dayBucketStart(bucket as number)) === bucket;
}

/** A month bucket is a real calendar month, yyyyMM (rejects 202613 and day buckets). */
export function isMonthBucket(bucket: unknown): bucket is number {
  if (!Number.isInteger(bucket)) return false;
  const b = bucket as number;
  return b >= 100_001 && b <= 999_912 && b % 100 >= 1 && b % 100 <= 12;
}
