/** Starts an app for a benchmark on its own keyspace of the local node. */
import { pino, type Logger } from 'pino';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { nodeForThrowawayWork } from '../../src/local-node/launcher.js';
import type { Clock } from '../../src/clock.js';

/** host:port of the node benchmarks use: CASSANDRA_CONTACT_POINTS's first, or the local throwaway-work node. */
export async function benchContactPoint(): Promise<string> {
  if (process.env.CASSANDRA_CONTACT_POINTS) return process.env.CASSANDRA_CONTACT_POINTS.split(',')[0]!;
  const node = await nodeForThrowawayWork();
  return `${node.host}:${node.port}`;
}

/** Put into a benchmark's env: the default (production) scrypt cost in place of benchEnv's cheap one. */
export const DEFAULT_SCRYPT_COST = { SCRYPT_N: '', SCRYPT_R: '', SCRYPT_P: '' };

/** The environment every benchmark instance runs with: its own keyspace of the local node, tests' cheap scrypt. */
export async function benchEnv(env: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    CASSANDRA_CONTACT_POINTS: await benchContactPoint(),
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    CASSANDRA_KEYSPACE: process.env.CASSANDRA_KEYSPACE ?? 'parley_bench',
    JWT_SECRET: 'parley-bench-secret-0123456789abcdef-0123456789abcdef',
    SCRYPT_N: String(2 ** 12),
    SCRYPT_P: '1',
    REGISTRATIONS_PER_ADDRESS_PER_HOUR: '1000000',
    // Every client socket comes from 127.0.0.1 too (the cap has its own test).
    MAX_LIVE_CONNECTIONS_PER_ADDRESS: '1000000',
    // Tests and benchmarks post far faster than one person would (the limit has its own test).
    ROOM_POSTS_PER_WINDOW: '1000000',
    LOG_LEVEL: 'warn',
    ...env,
  };
}

export async function benchApp(opts: { clock?: Clock; env?: Record<string, string>; logger?: Logger } = {}): Promise<App> {
  const config = loadConfig({ ...process.env, ...(await benchEnv(opts.env)) });
  const app = createApp({ config, clock: opts.clock, logger: opts.logger ?? pino({ level: 'warn' }) });
  await app.start();
  return app;
}

export function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const pick = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return { n: sorted.length, min: sorted[0]!, p50: pick(0.5), p95: pick(0.95), max: sorted.at(-1)! };
}

/** The middle sample (the upper one of an even count). */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
