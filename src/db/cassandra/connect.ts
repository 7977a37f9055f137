/**
 * Storage as every process that needs it opens it (an instance, an operator's
 * command): the configured cluster, or else the local node (started or
 * reused); the schema migrated when configured so; a connected client. Each
 * step is tried again while the cluster cannot serve yet (startup-wait.ts).
 */
import type cassandra from 'cassandra-driver';
import type { Logger } from 'pino';
import type { CassandraConfig } from '../../config.js';
import { defaultLocalNodeOptions, ensureLocalNode } from '../../local-node/launcher.js';
import { Database, type AroundRequest } from './client.js';
import { migrate } from './migrate.js';
import { untilStorageServes, type StartupProgress } from './startup-wait.js';
import { randomUUID } from 'node:crypto';

export async function connectStorage(
  config: CassandraConfig,
  logger: Logger,
  aroundCql?: AroundRequest,
  requestTracker?: cassandra.tracker.RequestTracker,
  progress?: StartupProgress,
): Promise<Database> {
  let contactPoints = config.contactPoints;
  if (contactPoints.length === 0) {
    const node = await ensureLocalNode(defaultLocalNodeOptions({ log: (line) => logger.info(line) }));
    contactPoints = [`${node.host}:${node.port}`];
  }
  const waiting = { timeoutMs: config.startupTimeoutMs, logger, progress };
  const migrationOwner = randomUUID();
  if (config.migrate) {
    progress?.('applying the schema (cql/)');
    await untilStorageServes('applying cql/', () => migrate(config, contactPoints, logger, undefined, migrationOwner), waiting);
  }
  const db = new Database(config, logger, contactPoints, aroundCql, requestTracker);
  progress?.('connecting');
  try {
    // Connected is not enough: with a node that still sees its peers as down, quorum reads fail. A quorum read of
    // the keyspace is what every request needs.
    await untilStorageServes('connecting', async () => {
      await db.connect();
      await db.quorumAnswers();
    }, waiting);
  } catch (err) {
    await db.shutdown();
    throw err;
  }
  return db;
}
