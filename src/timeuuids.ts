/**
 * Timeuuids, in one place: every id that orders something in time and
 * carries its time (room and direct messages, items, purchases) is made and
 * validated here.
 */
import { randomBytes } from 'node:crypto';
import cassandra from 'cassandra-driver';

const { Long, TimeUuid } = cassandra.types;
type TimeUuid = cassandra.types.TimeUuid;

const TICKS_PER_MS = 10_000;
const TICKS_PER_MICRO = 10;
const MICROS_PER_MS = 1000;

/**
 * The finest step between two ids of one millisecond.
 * - 'tick' (100 ns): up to 10,000 ids per millisecond before one borrows the next millisecond.
 * - 'microsecond': the id's time is a whole number of microseconds, so it can
 *   double as a Cassandra write timestamp ("written at or before timestamp T"
 *   and "id time at or before T" are the same statement: the messenger's
 *   unread design relies on it, see cql/003). A new millisecond starts at a
 *   random microsecond of its first half, so two instances making ids in the
 *   same millisecond rarely share a write timestamp (1 in 500).
 */
export type TimeUuidResolution = 'tick' | 'microsecond';

// One sequence per process, whatever the resolution: every id made here sorts after the ones made before.
let lastRequestedMs = Number.NEGATIVE_INFINITY;
let issuedMs = Number.NEGATIVE_INFINITY;
let issuedTicks = 0;
/**
 * The node and clock-sequence bits (RFC 4122), random, drawn once per process
 * and again whenever the clock goes back. Ids made going forward are already
 * distinct by time and tick; these keep processes apart, and keep ids made
 * after a clock step back apart from the ones made before it. (The driver,
 * left to itself, draws 8 random bytes per id: 2 % of a postMessage's CPU.)
 */
let nodeBits = drawNodeBits();

function drawNodeBits(): { nodeId: Buffer; clockId: Buffer } {
  return { nodeId: randomBytes(6), clockId: randomBytes(2) };
}

/**
 * A new timeuuid at `at` (from the injectable clock) that sorts after every
 * one this process made before: the driver's own tick counter wraps, which
 * could order two ids of one millisecond backwards. Ids of one millisecond
 * take successive ticks (or microseconds); when the millisecond is full they
 * borrow the next one. Only when the clock itself goes back (an injected test
 * clock) does the order follow the clock instead. Random node and clock bits
 * keep ids made by different instances (or across a clock step back) distinct.
 */
export function newTimeUuid(at: Date, resolution: TimeUuidResolution = 'tick'): TimeUuid {
  const step = resolution === 'microsecond' ? TICKS_PER_MICRO : 1;
  const ms = at.getTime();
  if (ms >= lastRequestedMs && ms <= issuedMs) {
    // Still inside the millisecond issued last (or one it borrowed): the next step after the last id.
    issuedTicks = Math.ceil((issuedTicks + 1) / step) * step;
    if (issuedTicks >= TICKS_PER_MS) {
      issuedMs += 1;
      issuedTicks = 0;
    }
  } else {
    if (ms < lastRequestedMs) nodeBits = drawNodeBits();
    issuedMs = ms;
    issuedTicks = resolution === 'microsecond' ? Math.floor(Math.random() * (MICROS_PER_MS / 2)) * TICKS_PER_MICRO : 0;
  }
  lastRequestedMs = ms;
  return TimeUuid.fromDate(new Date(issuedMs), issuedTicks, nodeBits.nodeId, nodeBits.clockId);
}

/** Milliseconds from the UUID epoch (1582-10-15, the Gregorian reform) to the Unix epoch. */
const UUID_EPOCH_MS = 12_219_292_800_000;
const TWO_TO_32 = 4_294_967_296;

/**
 * The id's time, in milliseconds since the Unix epoch, read from its time
 * fields with plain numbers. The driver's getDate goes through 64-bit Long
 * arithmetic and allocates a handful of objects per call: reading times so (and
 * a bigint column through its text, see bigIntOf) took 2 % of an inbox page's
 * CPU, and 12 % of what it allocates (626 KB a page, now 553).
 *
 * The 60-bit tick count is high·2³² + low (high: the 12 bits of time_hi and
 * the 16 of time_mid). With high = a·10⁴ + b, ticks / 10⁴ = a·2³² + (b·2³² +
 * low) / 10⁴, and every term stays far below 2⁵³, so the result is exact.
 */
export function timeUuidMs(id: TimeUuid | string): number {
  let low: number;
  let high: number;
  if (typeof id === 'string') {
    low = Number.parseInt(id.slice(0, 8), 16);
    high = (Number.parseInt(id.slice(14, 18), 16) & 0x0fff) * 0x10000 + Number.parseInt(id.slice(9, 13), 16);
  } else {
    const bytes = id.getBuffer();
    low = bytes.readUInt32BE(0);
    high = (bytes.readUInt16BE(6) & 0x0fff) * 0x10000 + bytes.readUInt16BE(4);
  }
  const a = Math.floor(high / TICKS_PER_MS);
  const b = high - a * TICKS_PER_MS;
  return a * TWO_TO_32 + Math.floor((b * TWO_TO_32 + low) / TICKS_PER_MS) - UUID_EPOCH_MS;
}

export function timeUuidDate(id: TimeUuid | string): Date {
  return new Date(timeUuidMs(id));
}

/** The smallest timeuuid of the millisecond `at`: a lower bound for "at or after". */
export function minTimeUuid(at: Date): TimeUuid {
  return TimeUuid.min(at, 0);
}

/** The largest timeuuid of the millisecond `at`: an upper bound for "at or before". */
export function maxTimeUuid(at: Date): TimeUuid {
  return TimeUuid.max(at, TICKS_PER_MS - 1);
}

/** 100 ns ticks since the Unix epoch, exact (a Long: the value exceeds 2^53). */
export function timeTicks(id: TimeUuid) {
  const { date, ticks } = id.getDatePrecision();
  return Long.fromNumber(date.getTime()).multiply(TICKS_PER_MS).add(ticks);
}

/** A timeuuid's time in ticks (100 ns) as a bigint, for comparing many ids made once each. */
export function timeTicksOf(id: string): bigint {
  const { date, ticks } = TimeUuid.fromString(id).getDatePrecision();
  return BigInt(date.getTime()) * 10_000n + BigInt(ticks);
}

/** Whether timeuuid `a` was made after `b`, to the tick (100 ns): finer than their dates' milliseconds. */
export function madeAfter(a: string, b: string): boolean {
  return timeTicks(TimeUuid.fromString(a)).greaterThan(timeTicks(TimeUuid.fromString(b)));
}

/** The id's time in microseconds since the epoch: the write timestamp of everything it stands for. */
export function timeMicros(id: TimeUuid): number {
  const { date, ticks } = id.getDatePrecision();
  return date.getTime() * MICROS_PER_MS + Math.floor(ticks / TICKS_PER_MICRO);
}

// Version 1 (time-based), RFC 4122 variant; either case (UUIDs are hex, clients may send upper case).
const TIME_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** The one rule for "is a timeuuid": anything else is refused before it reaches Cassandra. */
export function isTimeUuid(value: unknown): value is string {
  return typeof value === 'string' && TIME_UUID.test(value);
}

/** The timeuuid `text` stands for; undefined when it is not one (see isTimeUuid). */
export function parseTimeUuid(text: string): TimeUuid | undefined {
  return isTimeUuid(text) ? TimeUuid.fromString(text) : undefined;
}
