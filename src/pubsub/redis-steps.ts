/**
 * How a request's Redis step (a limiter's count, an event's publish) is bounded: within REDIS_STEP_MS on one Redis;
 * on a Redis Cluster also behind a breaker per master, so that once a master failed to answer, the steps bound for
 * its slots fail at once instead of each waiting out the deadline. No request waits to find out whether it is back:
 * probe() (once a second) pings each broken master and keeps it skipped while it does not answer, and a slot whose
 * owner changed (a failover) is served by its new master at once.
 */
import type { Cluster, Redis } from 'ioredis';
import { isRedisUnavailable, withinRedisStep } from './redis-connection.js';
import { keySlot } from './key-slot.js';

/** How long a master that failed is skipped before a request may try it again (a probe renews it while it is down). */
const BREAK_MS = 1500;

export interface RedisSteps {
  /** `step` (a command on `key`), bounded; rejects as an unreachable Redis does when it cannot be. */
  run<T>(key: string, step: () => Promise<T>, ms?: number): Promise<T>;
}

/** One Redis: each step within its deadline. */
export const boundedSteps: RedisSteps = {
  run: (_key, step, ms) => withinRedisStep(step(), ms),
};

/** The cluster's masters by their "host:port", as the slot map names them (Cluster.nodes is ioredis's documented way). */
export function mastersByKey(cluster: Cluster): Map<string, Redis> {
  return new Map(cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
}

/** A Redis Cluster: each step within its deadline, and behind its master's breaker. */
export class MasterBreaker implements RedisSteps {
  /** Masters ("host:port") that failed a step, until when they are skipped (renewed by each probe that fails). */
  private readonly brokenUntil = new Map<string, number>();
  private probing = false;

  constructor(private readonly cluster: Cluster) {}

  async run<T>(key: string, step: () => Promise<T>, ms?: number): Promise<T> {
    const owner = this.ownerOf(key);
    if (owner !== undefined && (this.brokenUntil.get(owner) ?? 0) > Date.now()) {
      throw new Error(`Connection is closed (redis cluster: master ${owner} did not answer; skipped until it does)`);
    }
    try {
      return await withinRedisStep(step(), ms);
    } catch (err) {
      if (owner !== undefined && isRedisUnavailable(err)) this.brokenUntil.set(owner, Date.now() + BREAK_MS);
      throw err;
    }
  }

  /**
   * Pings each broken master that the cluster still counts as one: one that answers serves its slots again, one
   * that does not stays skipped until the next probe. A master the probe cannot reach at all is tried again by a
   * request once its BREAK_MS are over.
   */
  async probe(): Promise<void> {
    if (this.probing || this.brokenUntil.size === 0) return;
    this.probing = true;
    try {
      const masters = mastersByKey(this.cluster);
      await Promise.all(
        [...this.brokenUntil.keys()].map(async (owner) => {
          const node = masters.get(owner);
          if (!node) return;
          try {
            await withinRedisStep(node.ping());
            this.brokenUntil.delete(owner);
          } catch {
            this.brokenUntil.set(owner, Date.now() + BREAK_MS);
          }
        }),
      );
    } finally {
      this.probing = false;
    }
  }

  /**
   * The master ("host:port") that owns `key`'s slot, as ioredis last read the slot map: the master ioredis sends the
   * step to. `slots` is a public member of ioredis's Cluster (not a private one), sparse where no master serves a slot.
   */
  private ownerOf(key: string): string | undefined {
    return (this.cluster.slots as Array<string[] | undefined>)[keySlot(key)]?.[0];
  }
}
