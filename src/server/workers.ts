/**
 * WEB_CONCURRENCY > 1: a primary process that forks that many workers, each a
 * whole Parley instance (createApp) listening on the same port through
 * node:cluster, which hands connections to them in turn. The workers share
 * nothing in memory; Redis carries what must cross them, as between instances.
 * The primary starts the local node first when no contact points are set, so
 * the workers do not race to launch it.
 */
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { defaultLocalNodeOptions, ensureLocalNode } from '../local-node/launcher.js';

/** A worker that dies sooner than this after its start is not restarted: its failure is not transient. */
const MIN_UPTIME_MS = 10_000;

export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  const env: Record<string, string> = {};
  if (config.cassandra.contactPoints.length === 0) {
    const node = await ensureLocalNode(defaultLocalNodeOptions({ log: (line) => logger.info(line) }));
    env.CASSANDRA_CONTACT_POINTS = `${node.host}:${node.port}`;
  }
  let stopping = false;
  const workers = () => Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
  const stopAll = async (exitCode: number) => {
    stopping = true;
    const exits = workers()
      .filter((w) => !w.isDead())
      .map((w) => {
        const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
        w.process.kill('SIGTERM');
        return exited;
      });
    await Promise.all(exits);
    process.exit(exitCode);
  };
  const fork = () => {
    const worker = cluster.fork(env);
    const startedAt = Date.now();
    worker.once('exit', (code, signal) => {
      // stopAll() is under way and exits with its own code.
      if (stopping) return;
      // A clean exit is a stop (a terminal's Ctrl-C reaches the workers too): once all are gone, so is the primary.
      if (code === 0 && !signal) {
        if (workers().every((w) => w.isDead())) process.exit(0);
        return;
      }
      const uptime = Date.now() - startedAt;
      logger.error({ pid: worker.process.pid, code, signal, uptimeMs: uptime }, 'worker exited');
      if (uptime < MIN_UPTIME_MS) {
        logger.error('a worker failed right after starting; stopping every worker');
        void stopAll(1);
      } else fork();
    });
  };
  for (let i = 0; i < config.webConcurrency; i++) fork();
  logger.info({ workers: config.webConcurrency }, 'Parley primary started its workers');
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void stopAll(0));
}
