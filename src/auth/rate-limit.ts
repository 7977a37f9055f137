/**
 * Fixed-window failure counters for login throttling. With Redis the counters
 * are shared by every instance; without it each instance counts on its own.
 * If Redis is unreachable the limiter fails open (and logs): an outage of the
 * limiter must not lock every user out.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface Counter {
  count: number;
  /** Seconds until the window resets. */
  retryAfter: number;
}

export interface RateLimiter {
  peek(key: string): Promise<Counter>;
  increment(key: string, windowSeconds: number): Promise<Counter>;
  reset(key: string): Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  async peek(key: string): Promise<Counter> {
    const w = this.live(key);
    return w ? { count: w.count, retryAfter: Math.ceil((w.resetAt - Date.now()) / 1000) } : { count: 0, retryAfter: 0 };
  }

  async increment(key: string, windowSeconds: number): Promise<Counter> {
    const w = this.live(key) ?? { count: 0, resetAt: Date.now() + windowSeconds * 1000 };
    w.count += 1;
    this.windows.set(key, w);
    if (this.windows.size > 100_000) this.prune();
    return { count: w.count, retryAfter: Math.ceil((w.resetAt - Date.now()) / 1000) };
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

export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly prefix = 'parley:ratelimit:',
  ) {}

  async peek(key: string): Promise<Counter> {
    try {
      const [[, count], [, ttl]] = (await this.redis.multi().get(this.prefix + key).ttl(this.prefix + key).exec()) as [
        [Error | null, string | null],
        [Error | null, number],
      ];
      return { count: Number(count ?? 0), retryAfter: Math.max(0, ttl) };
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'rate limiter unavailable; allowing');
      return { count: 0, retryAfter: 0 };
    }
  }

  async increment(key: string, windowSeconds: number): Promise<Counter> {
    try {
      const [count, ttl] = (await this.redis.eval(INCREMENT, 1, this.prefix + key, windowSeconds)) as [number, number];
      return { count, retryAfter: Math.max(0, ttl) };
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'rate limiter unavailable; not counting');
      return { count: 0, retryAfter: 0 };
    }
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.prefix + key).catch(() => undefined);
  }
}
