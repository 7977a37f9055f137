/**
 * ioredis connections with the settings every use shares: errors are logged
 * (never unhandled), reconnects back off, and commands fail instead of queueing
 * forever while Redis is down.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * What every connection shares, to one Redis or to a cluster's node: while Redis is down, a command fails once two
 * reconnects have failed instead of waiting for it to come back, and a connect gives up after 5 s.
 */
export const CONNECTION_DEFAULTS = { maxRetriesPerRequest: 2, connectTimeout: 5000 } as const;

export function createRedis(
  url: string,
  logger: Logger,
  role: string,
  opts: { commandTimeoutMs?: number; autoResubscribe?: boolean } = {},
): Redis {
  const redis = new Redis(url, {
    ...CONNECTION_DEFAULTS,
    connectionName: `parley-${role}`,
    // A command connection must fail fast while Redis is down (a login must not wait 20 s for the limiter).
    commandTimeout: opts.commandTimeoutMs,
    // Off for a subscriber that subscribes again by itself (redis.ts).
    autoResubscribe: opts.autoResubscribe ?? true,
    retryStrategy: (times) => Math.min(100 * 2 ** times, 5000),
  });
  let down = false;
  redis.on('error', (err) => {
    if (!down) logger.error({ role, err: err.message }, 'redis connection error');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info({ role }, 'redis connection restored');
    down = false;
  });
  return redis;
}

/**
 * The longest a request waits on one Redis step (a limiter's count, an event's publish) while Redis, or the master
 * that owns the key, cannot be reached: past it the step gives up as its use documents (a limiter fails open, a
 * publish counts as failed and feeds catch up). Commands never queue for an outage's length (see createRedis and
 * ShardedRedisPubSub.connect); this bounds what retries, redirections and a lost master add up to.
 */
export const REDIS_STEP_MS = 1000;

/** `step`, or a rejection as a timed-out command's once REDIS_STEP_MS have passed (the step may still run). */
export function withinRedisStep<T>(step: Promise<T>, ms = REDIS_STEP_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Command timed out (no answer from Redis within ${ms} ms)`)), ms);
  });
  // A step that fails after the deadline has nobody waiting for it.
  step.catch(() => undefined);
  return Promise.race([step, deadline]).finally(() => clearTimeout(timer));
}

/** Errors ioredis gives while Redis is down: retry later, not a bug. */
export function isRedisUnavailable(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  if (e?.name === 'MaxRetriesPerRequestError') return true;
  return (
    typeof e?.message === 'string' &&
    /^(Connection is closed|Command timed out|Stream isn't writeable|connect ECONNREFUSED|Cluster isn't ready|No sharded subscriber|No subscriber for the cluster)/.test(e.message)
  );
}
