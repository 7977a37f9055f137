/**
 * ioredis connections with the settings every use shares: errors are logged
 * (never unhandled), reconnects back off, and commands fail instead of queueing
 * forever while Redis is down.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export function createRedis(url: string, logger: Logger, role: string, opts: { commandTimeoutMs?: number } = {}): Redis {
  const redis = new Redis(url, {
    connectionName: `parley-${role}`,
    maxRetriesPerRequest: 2,
    connectTimeout: 5000,
    // A command connection must fail fast while Redis is down (a login must not wait 20 s for the limiter).
    commandTimeout: opts.commandTimeoutMs,
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

/** Errors ioredis gives while Redis is down: retry later, not a bug. */
export function isRedisUnavailable(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  if (e?.name === 'MaxRetriesPerRequestError') return true;
  return typeof e?.message === 'string' && /^(Connection is closed|Command timed out|Stream isn't writeable|connect ECONNREFUSED)/.test(e.message);
}
