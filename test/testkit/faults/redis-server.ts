/**
 * A Redis server of a test's own (Debian's redis-server), on a free port, that
 * the test stops and starts again for real: the outage its clients see is a
 * refused connection, as when Redis restarts in production.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { eventually } from '../poll.js';
import { freePort } from '../free-port.js';

export class RedisServer {
  private process?: ChildProcess;

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.process = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await eventually(() => this.ping(), { what: `redis-server on ${this.port} to answer` });
  }

  /** Stops the server (SIGTERM) and waits for the process to exit. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }

  private ping(): Promise<boolean> {
    return redisAnswers(this.url);
  }
}

/** Whether a Redis answers PING at `url` now. */
export async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * The Redis a test run shares (its global setup): TEST_REDIS_URL when set, else the one answering on 6379, else
 * a throwaway redis-server of the run's own, stopped by `stop` (as a throwaway Cassandra node is started when
 * none answers).
 */
export async function redisForTestRun(log: (line: string) => void): Promise<{ url: string; stop: () => Promise<void> }> {
  const given = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (process.env.TEST_REDIS_URL || (await redisAnswers(given))) return { url: given, stop: async () => {} };
  const server = await RedisServer.start().catch((err: unknown) => {
    throw new Error(`no Redis answers on 6379 and redis-server could not be started (${(err as Error).message}): install it (apt-get install redis-server)`);
  });
  log(`[test] no Redis on 6379: started a throwaway redis-server on ${server.port}`);
  return { url: server.url, stop: () => server.stop() };
}
