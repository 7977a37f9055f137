/**
 * Fixed-window counters: failed logins and sign-ups per login and address,
 * and typing notices per user and room. With Redis the counters
 * are shared by every instance; without it each instance counts on its own.
 * If Redis is unreachable, or does not answer within REDIS_STEP_MS, the
 * limiter fails open (and logs): an outage of the limiter must not lock every
 * user out, nor hold their requests for its length.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { boundedSteps, type RedisSteps } from './pubsub/redis-steps.js';

export interface Counter {
  count: number;
  /** Seconds until the window resets. */
  retryAfter: number;
}

/**
 * Callers count an attempt BEFORE doing the work (increment is atomic), then
 * give it back if it turned out fine (decrement): checking first and counting
 * afterwards would let a burst of parallel attempts through.
 */
export interface RateLimiter {
  increment(key: string, windowSeconds: number): Promise<Counter>;
  decrement(key: string): Promise<void>;
  reset(key: string): Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  async increment(key: string, windowSeconds: number): Promise<Counter> {
    const w = this.live(key) ?? { count: 0, resetAt: Date.now() + windowSeconds * 1000 };
    w.count += 1;
    this.windows.set(key, w);
    if (this.windows.size > 100_000) this.prune();
    return { count: w.count, retryAfter: Math.ceil((w.resetAt - Date.now()) / 1000) };
  }

  async decrement(key: string): Promise<void> {
    const w = this.live(key);
    if (w && w.count > 0) w.count -= 1;
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  private live(key: string) {
    const w = this.windows.get(key);
    if (w && w.resetAt <= Date.now()) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  private prune() {
    const now = Date.now();
    for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
  }
}

// INCR and EXPIRE in one atomic step, so a crash between them never leaves a counter without expiry.
const INCREMENT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('TTL', KEYS[1])}`;

// Never creates a key (a missing window has nothing to give back) and never goes below zero.
const DECREMENT = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return n`;

export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly logger: Logger,
    /** Namespaces keys, so deployments (or test runs) sharing one Redis never share counters. */
    private readonly prefix: string,
    /** Bounds each command (and, on a cluster, skips a master that did not answer). */
    private readonly steps: RedisSteps = boundedSteps,
  ) {}

  async increment(key: string, windowSeconds: number): Promise<Counter> {
    try {
      const [count, ttl] = (await this.steps.run(this.prefix + key, () => this.redis.eval(INCREMENT, 1, this.prefix + key, windowSeconds))) as [number, number];
      return { count, retryAfter: Math.max(0, ttl) };
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'rate limiter unavailable; not counting');
      return { count: 0, retryAfter: 0 };
    }
  }

  async decrement(key: string): Promise<void> {
    await this.steps.run(this.prefix + key, () => this.redis.eval(DECREMENT, 1, this.prefix + key)).catch(() => undefined);
  }

  async reset(key: string): Promise<void> {
    await this.steps.run(this.prefix + key, () => this.redis.del(this.prefix + key)).catch(() => undefined);
  }
}
