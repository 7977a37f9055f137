/**
 * Explicit write timestamps. Cassandra keeps, per cell, the write with the
 * highest timestamp, and a delete is a write. A cleanup that runs for a while
 * after the fact it cleans up (a room deleted a moment ago) must not erase
 * what was written after that fact (a room of the same name created since):
 * it takes its timestamp at the fact and writes every delete USING TIMESTAMP
 * that value, so every later write wins.
 */
import cassandra from 'cassandra-driver';
import { bigIntOf, type Database } from './client.js';

/** Microseconds since the epoch, as Cassandra stores write times. */
export type WriteTimestamp = cassandra.types.Long;

/**
 * The next timestamp of the generator the driver stamps this instance's
 * writes with (monotonic: every later write by this instance gets a larger
 * one). Writes by other instances are ordered by their clocks, which must
 * agree to well within the time a competing write takes (an LWT and more).
 */
export function nextWriteTimestamp(db: Database): WriteTimestamp {
  // The client's options are public at run time but missing from the driver's typings.
  const { options } = db.client as unknown as { options: cassandra.ClientOptions };
  const next = options.policies?.timestampGeneration?.next(db.client) ?? Date.now() * 1000;
  return typeof next === 'number' ? cassandra.types.Long.fromNumber(next) : next;
}

/** The write timestamp of a moment (its microsecond). */
export const writeTimestampOf = (at: Date): WriteTimestamp => cassandra.types.Long.fromNumber(at.getTime() * 1000);

/** When a write timestamp was taken, in milliseconds since the epoch. */
export const writeTimestampMs = (at: WriteTimestamp): number => Number(bigIntOf(at) / 1000n);

/** The later of two write timestamps. */
export const maxLong = (a: WriteTimestamp, b: WriteTimestamp): WriteTimestamp => (a.greaterThan(b) ? a : b);
