/**
 * How a request's Redis step (a limiter's count, an event's publish) is bounded: within REDIS_STEP_MS on one Redis;
 * on a Redis Cluster also behind a breaker per master, so that once a master failed to answer, the steps bound for
 * its slots fail at once for BREAK_MS instead of each waiting out the deadline (one step per master and BREAK_MS
 * finds out whether it is back).
 */
import type { Cluster } from 'ioredis';
import { isRedisUnavailable, withinRedisStep } from './redis-connection.js';
import { keySlot } from './key-slot.js';

/** How long a master that failed a step is skipped. */
const BREAK_MS = 1000;

export interface RedisSteps {
  /** `step` (a command on `key`), bounded; rejects as an unreachable Redis does when it cannot be. */
  run<T>(key: string, step: () => Promise<T>, ms?: number): Promise<T>;
}

/** One Redis: each step within its deadline. */
export const boundedSteps: RedisSteps = {
  run: (_key, step, ms) => withinRedisStep(step(), ms),
};

/** A Redis Cluster: each step within its deadline, and behind its master's breaker. */
export class MasterBreaker implements RedisSteps {
  private readonly brokenUntil = new Map<string, number>();

  constructor(private readonly cluster: Cluster) {}

  async run<T>(key: string, step: () => Promise<T>, ms?: number): Promise<T> {
    const owner = this.ownerOf(key);
    if (owner !== undefined && (this.brokenUntil.get(owner) ?? 0) > Date.now()) {
      throw new Error(`Connection is closed (redis cluster: master ${owner} did not answer; skipped for ${BREAK_MS} ms)`);
    }
    try {
      const result = await withinRedisStep(step(), ms);
      if (owner !== undefined) this.brokenUntil.delete(owner);
      return result;
    } catch (err) {
      if (owner !== undefined && isRedisUnavailable(err)) this.brokenUntil.set(owner, Date.now() + BREAK_MS);
      throw err;
    }
  }

  /** The master ("host:port") that owns `key`'s slot, as ioredis last read the slot map. */
  private ownerOf(key: string): string | undefined {
    return (this.cluster as unknown as { slots: Array<string[] | undefined> }).slots[keySlot(key)]?.[0];
  }
}
