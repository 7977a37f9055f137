/**
 * The walk every job that finishes what requests left behind takes: a list partitioned by UTC day (room cleanups,
 * room notices), read day by day over the last Limits.room.cleanupRecoveryDays, each entry past its grace settled.
 * A day that cannot be read, or an entry that fails, is logged and left for the next run.
 */
import type { Services } from '../services.js';
import { dayBucket } from '../../buckets.js';
import { Limits } from '../../limits.js';

export interface PendingList<T> {
  /** What the list holds, for the log ("room cleanups"). */
  what: string;
  inDay(day: number): Promise<T[]>;
  /** When the entry was listed (ms): it is left to its request until `graceMs` after. */
  listedAtMs(entry: T): number;
  graceMs: number;
  settle(entry: T): Promise<void>;
  /** What the log says of an entry that failed. */
  describe(entry: T): Record<string, unknown>;
}

/** Settles every entry of `list` past its grace; returns how many it settled. */
export async function settleListedByDay<T>(services: Services, list: PendingList<T>): Promise<number> {
  const { clock, logger } = services;
  const now = clock.now().getTime();
  let settled = 0;
  for (let back = Limits.room.cleanupRecoveryDays; back >= -1; back--) {
    const day = dayBucket(new Date(now - back * 86_400_000));
    let pending: T[];
    try {
      pending = await list.inDay(day);
    } catch (err) {
      logger.error({ err, day }, `could not read a day of pending ${list.what}; skipped until the next run`);
      continue;
    }
    for (const entry of pending) {
      if (now - list.listedAtMs(entry) < list.graceMs) continue;
      try {
        await list.settle(entry);
        settled += 1;
      } catch (err) {
        logger.error({ err, ...list.describe(entry) }, `one of the pending ${list.what} could not be settled; tried again on the next run`);
      }
    }
  }
  return settled;
}
