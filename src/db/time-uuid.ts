/**
 * Message ids are timeuuids: they order a room's history and carry its time.
 */
import { TimeUuid } from './client.js';

const TICKS_PER_MS = 10_000;
let lastRequestedMs = Number.NEGATIVE_INFINITY;
let issuedMs = Number.NEGATIVE_INFINITY;
let issuedTicks = 0;

/**
 * A timeuuid for `at` that sorts after every one this process made before
 * (the driver's own tick counter wraps, which could order two posts of one
 * millisecond backwards). More than 10,000 in one millisecond borrow the next
 * one. Only when the clock itself goes back (an injected test clock) does the
 * order follow the clock instead. Random node and clock bits keep ids made by
 * different instances distinct.
 */
export function newTimeUuid(at: Date): TimeUuid {
  const ms = at.getTime();
  if (ms >= lastRequestedMs && ms <= issuedMs) {
    issuedTicks += 1;
    if (issuedTicks >= TICKS_PER_MS) {
      issuedMs += 1;
      issuedTicks = 0;
    }
  } else {
    issuedMs = ms;
    issuedTicks = 0;
  }
  lastRequestedMs = ms;
  return TimeUuid.fromDate(new Date(issuedMs), issuedTicks);
}

export function timeUuidDate(id: string): Date {
  return TimeUuid.fromString(id).getDate();
}

/** The smallest timeuuid of the millisecond `at`: a lower bound for "at or after". */
export function minTimeUuid(at: Date): TimeUuid {
  return TimeUuid.min(at, 0);
}

/** The largest timeuuid of the millisecond `at`: an upper bound for "at or before". */
export function maxTimeUuid(at: Date): TimeUuid {
  return TimeUuid.max(at, 9999);
}

const TIME_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isTimeUuid(value: unknown): value is string {
  return typeof value === 'string' && TIME_UUID.test(value);
}
