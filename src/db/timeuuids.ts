/**
 * Time-based ids whose time is also a Cassandra write timestamp.
 *
 * Cassandra write timestamps are microseconds; a timeuuid carries 100 ns
 * ticks. Ids made here always hold a whole number of microseconds, so
 * "written at or before timestamp T" and "id time at or before T" are the same
 * statement (the messenger's unread design relies on it, see cql/003).
 */
import { Long, TimeUuid } from './client.js';

const TICKS_PER_MS = 10_000;
const TICKS_PER_MICRO = 10;
const MICROS_PER_MS = 1000;

let lastMs = Number.NaN;
let sameMsCount = 0;

/**
 * A new timeuuid at `at` (from the injectable clock). Ids made in one process
 * within one millisecond get successive microseconds, so they sort in the
 * order they were made and never share a write timestamp (at least 500 per
 * millisecond; beyond that microseconds repeat, ids stay unique by their
 * random node and clock parts).
 */
export function newTimeUuid(at: Date): TimeUuid {
  const ms = at.getTime();
  if (ms === lastMs) {
    sameMsCount += 1;
  } else {
    lastMs = ms;
    // Start each millisecond at a random microsecond of its first half, so two instances
    // making ids in the same millisecond rarely share a microsecond (1 in 500).
    sameMsCount = Math.floor(Math.random() * 500);
  }
  return TimeUuid.fromDate(at, (sameMsCount % MICROS_PER_MS) * TICKS_PER_MICRO);
}

/** 100 ns ticks since the Unix epoch, exact (a Long: the value exceeds 2^53). */
export function timeTicks(id: TimeUuid) {
  const { date, ticks } = id.getDatePrecision();
  return Long.fromNumber(date.getTime()).multiply(TICKS_PER_MS).add(ticks);
}

/** The id's time in microseconds since the epoch: the write timestamp of everything it stands for. */
export function timeMicros(id: TimeUuid): number {
  const { date, ticks } = id.getDatePrecision();
  return date.getTime() * MICROS_PER_MS + Math.floor(ticks / TICKS_PER_MICRO);
}

export function parseTimeUuid(text: string): TimeUuid | undefined {
  try {
    const id = TimeUuid.fromString(text);
    // fromString accepts any UUID; only version 1 (time-based) ids are ours.
    return id.toString()[14] === '1' ? id : undefined;
  } catch {
    return undefined;
  }
}
