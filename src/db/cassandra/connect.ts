/**
 * Storage as every process that needs it opens it (an instance, an operator's
 * command): the configured cluster, or else the local node (started or
 * reused); the schema migrated when configured so; a connected client.
 */
import type cassandra from 'cassandra-driver';
import type { Logger } from 'pino';
import type { CassandraConfig } from '../../config.js';
import { defaultLocalNodeOptions, ensureLocalNode } from '../../local-node/launcher.js';
import { Database, type AroundRequest } from './client.js';
import { migrate } from './migrate.js';

export async function connectStorage(
  config: CassandraConfig,
  logger: Logger,
  aroundCql?: AroundRequest,
  requestTracker?: cassandra.tracker.RequestTracker,
): Promise<Database> {
  let contactPoints = config.contactPoints;
  if (contactPoints.length === 0) {
    const node = await ensureLocalNode(defaultLocalNodeOptions({ log: (line) => logger.info(line) }));
    contactPoints = [`${node.host}:${node.port}`];
  }
  if (config.migrate) await migrate(config, contactPoints, logger);
  const db = new Database(config, logger, contactPoints, aroundCql, requestTracker);
  await db.connect();
  return db;
}
