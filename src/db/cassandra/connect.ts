/**
 * Storage as every process that needs it opens it (an instance, an operator's
 * command): the configured cluster, or else the local node (started or
 * reused); the schema migrated when configured so; a connected client. Each
 * step is tried again while the cluster cannot serve yet (startup-wait.ts).
 */
import type cassandra from 'cassandra-driver';
import type { Logger } from 'pino';
import { SettingError, type CassandraConfig } from '../../config.js';
import { defaultLocalNodeOptions, ensureLocalNode } from '../../local-node/launcher.js';
import { Database, toConsistencyKey, type AroundRequest } from './client.js';
import { loadMigrations, migrate } from './migrate.js';
import { SchemaNotAppliedYetError, untilStorageServes, type StartupProgress } from './startup-wait.js';
import { randomUUID } from 'node:crypto';

export async function connectStorage(
  config: CassandraConfig,
  logger: Logger,
  aroundCql?: AroundRequest,
  requestTracker?: cassandra.tracker.RequestTracker,
  progress?: StartupProgress,
): Promise<Database> {
  checkSettings(config);
  let contactPoints = config.contactPoints;
  if (contactPoints.length === 0) {
    const node = await ensureLocalNode(defaultLocalNodeOptions({ log: (line) => logger.info(line) }));
    contactPoints = [`${node.host}:${node.port}`];
  }
  const waiting = { timeoutMs: config.startupTimeoutMs, logger, progress, migrates: config.migrate };
  const migrationOwner = randomUUID();
  if (config.migrate) {
    progress?.('applying the schema (cql/)');
    await untilStorageServes('applying cql/', () => migrate(config, contactPoints, logger, undefined, migrationOwner), waiting);
  }
  const db = new Database(config, logger, contactPoints, aroundCql, requestTracker);
  progress?.('connecting');
  try {
    // Connected is not enough: with a node that still sees its peers as down, quorum reads fail, and a node may
    // not know the keyspace or its tables yet. A quorum read of the keyspace is what every request needs.
    await untilStorageServes('connecting', async () => {
      await db.connect();
      await db.quorumAnswers();
      if (!config.migrate) await allMigrationsApplied(db);
    }, waiting);
  } catch (err) {
    await db.shutdown();
    throw err;
  }
  return db;
}

/** Settings no wait can fix, refused before anything is started or connected. */
function checkSettings(config: CassandraConfig): void {
  for (const [setting, level] of [['CASSANDRA_CONSISTENCY', config.consistency], ['CASSANDRA_SERIAL_CONSISTENCY', config.serialConsistency]]) {
    try {
      toConsistencyKey(level!);
    } catch {
      throw new SettingError(`${setting}: "${level}" is not a consistency level (e.g. LOCAL_QUORUM, QUORUM, LOCAL_SERIAL)`);
    }
  }
}

/**
 * Migrations off, another instance or a job applies cql/: a start at the moment it does waits until every
 * migration this code knows is recorded (so, its tables agreed on), rather than serving with tables missing.
 */
async function allMigrationsApplied(db: Database): Promise<void> {
  const rs = await db.client.execute('SELECT version FROM schema_migrations', [], { prepare: false, isIdempotent: true });
  const applied = new Set(rs.rows.map((row) => row.version as string));
  const missing = loadMigrations().filter((m) => !applied.has(m.version));
  if (missing.length > 0) {
    throw new SchemaNotAppliedYetError(`${missing.length} migration(s) of cql/ not applied yet, first ${missing[0]!.version}`);
  }
}
