/**
 * Message ids are timeuuids: they order a room's history and carry its time.
 */
import { TimeUuid } from './client.js';

const TICKS_PER_MS = 10_000;
let lastMs = Number.NEGATIVE_INFINITY;
let lastTicks = 0;

/**
 * A timeuuid for `at` that sorts after every one this process made before for
 * the same millisecond (the driver's own tick counter wraps, which could order
 * two posts of one millisecond backwards). Random node and clock bits keep
 * ids made by different instances distinct.
 */
export function newTimeUuid(at: Date): TimeUuid {
  let ms = at.getTime();
  if (ms === lastMs) {
    lastTicks += 1;
    if (lastTicks >= TICKS_PER_MS) {
      // 10,000 ids in one millisecond: borrow the next one rather than repeat an order.
      ms += 1;
      lastTicks = 0;
    }
  } else {
    lastTicks = 0;
  }
  lastMs = ms;
  return TimeUuid.fromDate(new Date(ms), lastTicks);
}

export function timeUuidDate(id: string): Date {
  return TimeUuid.fromString(id).getDate();
}

/** The smallest timeuuid of the millisecond `at`: a lower bound for "at or after". */
export function minTimeUuid(at: Date): TimeUuid {
  return TimeUuid.min(at, 0);
}

const TIME_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isTimeUuid(value: unknown): value is string {
  return typeof value === 'string' && TIME_UUID.test(value);
}
