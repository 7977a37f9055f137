/**
 * Starts real app instances for a test file, against this run's keyspace on
 * the real Cassandra node. Every instance started here is stopped after the file.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { createApp, type App, type AppOptions } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/observability/logging.js';
import type { Clock } from '../../src/clock.js';

/** The run's Redis (test/global-setup.ts): TEST_REDIS_URL, the one on 6379, or a throwaway redis-server. */
export const REDIS_URL = inject('redisUrl');

/** Shared by every instance so a token issued by one is valid on another. */
export const TEST_JWT_SECRET = 'parley-test-secret-0123456789abcdef-0123456789abcdef';

export interface StartOptions {
  /** Route pub/sub (and rate limits) through the real Redis. */
  redis?: boolean;
  clock?: Clock;
  env?: Record<string, string>;
  /** Collect every log line (at debug level, or `logLevel`) here instead of discarding them. */
  logs?: string[];
  logLevel?: 'debug' | 'trace';
  /** Send spans to this processor (e.g. an in-memory exporter's). */
  tracing?: AppOptions['tracing'];
}

const running = new Set<App>();

/**
 * Redis keys and channels of this test file: shared by the instances a file
 * starts (they must hear each other), never by two files or two runs (rate
 * limit counters such as the one per client address would leak between them).
 */
const FILE_REDIS_SUFFIX = randomBytes(4).toString('hex');

afterAll(async () => {
  await Promise.all([...running].map((app) => app.stop()));
  running.clear();
});

export function testEnv(opts: StartOptions = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    CASSANDRA_CONTACT_POINTS: inject('cassandraContactPoint'),
    CASSANDRA_KEYSPACE: inject('keyspace'),
    // The global setup applied cql/ once for the whole run.
    CASSANDRA_MIGRATE: '0',
    JWT_SECRET: TEST_JWT_SECRET,
    // The default cost takes ~0.1-0.3 s per hash; tests register hundreds of
    // users, so they use N=2^12, p=1. Same code path, lower cost.
    SCRYPT_N: String(2 ** 12),
    SCRYPT_P: '1',
    // Every test user signs up from 127.0.0.1.
    REGISTRATIONS_PER_ADDRESS_PER_HOUR: '1000000',
    // Every client socket comes from 127.0.0.1 too (the cap has its own test).
    MAX_LIVE_CONNECTIONS_PER_ADDRESS: '1000000',
    // Tests and benchmarks post far faster than one person would (the limit has its own test).
    ROOM_POSTS_PER_WINDOW: '1000000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...(opts.redis ? { REDIS_URL, REDIS_PREFIX: `parley:${inject('keyspace')}:${FILE_REDIS_SUFFIX}:` } : {}),
    ...opts.env,
  };
}

export async function startApp(opts: StartOptions = {}): Promise<App> {
  const config = loadConfig(testEnv(opts));
  const logger = opts.logs
    ? createLogger({ logLevel: opts.logLevel ?? 'debug' }, { write: (line: string) => void opts.logs!.push(line) })
    : createLogger(config);
  // Fault hooks come in through AppOptions: each test app gets an empty set that testkit/faults/fault-hooks.ts fills.
  const app = createApp({ config, clock: opts.clock, logger, tracing: opts.tracing, hooks: {} });
  await app.start();
  running.add(app);
  return app;
}

export async function stopApp(app: App): Promise<void> {
  running.delete(app);
  await app.stop();
}

/** A clock a test moves by hand (e.g. to post into past days). */
export class ManualClock implements Clock {
  constructor(private current = new Date()) {}
  now(): Date {
    return new Date(this.current);
  }
  set(at: Date | string): void {
    this.current = new Date(at);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
