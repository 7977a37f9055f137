/**
 * Applies the numbered cql/*.cql files not yet applied, records each in
 * schema_migrations, and waits for schema agreement after every DDL statement.
 * A lease row taken with an LWT makes concurrent starts take turns, so two
 * instances never race on the same CREATE TABLE.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import cassandra from 'cassandra-driver';
import type { Logger } from 'pino';
import type { CassandraConfig } from '../../config.js';
import { clientOptions, toConsistencyKey } from './client.js';
import { isSchemaNotKnownYet } from './schema-not-known.js';
import { projectPath } from '../../project-root.js';

export const CQL_DIR = projectPath('cql');

export interface Migration {
  version: string;
  statements: string[];
  checksum: string;
}

/** Splits a .cql file into statements, dropping comments. */
export function parseCql(text: string): string[] {
  const withoutComments = text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((line) => line.replace(/(--|\/\/).*$/, ''))
    .join('\n');
  return withoutComments
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function loadMigrations(dir = CQL_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.*\.cql$/.test(f))
    .sort()
    .map((file) => {
      const text = readFileSync(`${dir}/${file}`, 'utf8');
      return {
        version: file.replace(/\.cql$/, ''),
        statements: parseCql(text),
        checksum: createHash('sha256').update(text).digest('hex').slice(0, 16),
      };
    });
}

function replicationCql(config: CassandraConfig): string {
  const dcs = Object.entries(config.replication);
  if (dcs.length === 0) return "{'class': 'SimpleStrategy', 'replication_factor': 1}";
  return `{'class': 'NetworkTopologyStrategy', ${dcs.map(([dc, n]) => `'${dc}': ${n}`).join(', ')}}`;
}

const LEASE_SECONDS = 120;

/** The nodes did not all report the same schema in time (a node slow or down): a migration may be tried again. */
export class SchemaDisagreementError extends Error {
  override name = 'SchemaDisagreementError';
}

/** A migration cannot go on until the operator acts: the message says what to do, in one line. */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** Answers by which Cassandra refuses a statement as written: no wait changes them. */
const REFUSED_AS_WRITTEN: ReadonlySet<number> = new Set([
  cassandra.types.responseErrorCodes.syntaxError,
  cassandra.types.responseErrorCodes.invalid,
  cassandra.types.responseErrorCodes.configError,
  cassandra.types.responseErrorCodes.alreadyExists,
]);

/** Runs one statement of a cql/ file; a statement Cassandra refuses as written is named with its file. */
async function applyStatement(version: string, statement: string, ddl: (query: string) => Promise<void>): Promise<void> {
  try {
    await ddl(statement);
  } catch (err) {
    const refused = err instanceof cassandra.errors.ResponseError && REFUSED_AS_WRITTEN.has(err.code) && !isSchemaNotKnownYet(err);
    if (!refused) throw err;
    throw new MigrationError(`cql/${version}.cql: Cassandra refused a statement (${(err as Error).message}): fix it in a new numbered file, or this one if it was never applied`);
  }
}

/**
 * The driver already waits (up to 10 s) for agreement after a DDL statement;
 * check again, for up to 30 s more, so the next statement never races it on a
 * cluster. (checkSchemaAgreement is public in the driver but missing from its typings.)
 */
async function schemaAgreement(client: cassandra.Client): Promise<void> {
  const metadata = client.metadata as unknown as { checkSchemaAgreement(): Promise<boolean> };
  for (let i = 0; i < 150; i++) {
    if (await metadata.checkSchemaAgreement()) return;
    await delay(200);
  }
  throw new SchemaDisagreementError('the nodes did not agree on the schema within 30 s');
}

export async function migrate(
  config: CassandraConfig,
  contactPoints: string[],
  logger: Logger,
  migrations: Migration[] = loadMigrations(),
  /**
   * Who takes the migration lease. A start that tries again after a failure passes the same owner each time: a
   * lease its failed attempt could not give back is its own, not another instance's to wait out.
   */
  owner: string = randomUUID(),
): Promise<string[]> {
  const ks = config.keyspace;
  if (!/^[a-z][a-z0-9_]{0,47}$/.test(ks)) {
    throw new MigrationError(`CASSANDRA_KEYSPACE: "${ks}" is not a keyspace name this start can create (a-z, 0-9 and _, starting with a letter, at most 48)`);
  }
  const makeClient = (keyspace?: string) =>
    new cassandra.Client(
      clientOptions(config, contactPoints, {
        keyspace,
        socketOptions: { readTimeout: 60_000 },
        queryOptions: {
          consistency: cassandra.types.consistencies[toConsistencyKey(config.consistency)],
          serialConsistency: cassandra.types.consistencies[toConsistencyKey(config.serialConsistency)],
        },
      }),
    );
  // Create the keyspace first, then work inside it so cql/ files stay unqualified.
  const bootstrap = makeClient();
  try {
    await bootstrap.connect();
    await bootstrap.execute(`CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = ${replicationCql(config)}`);
    await schemaAgreement(bootstrap);
  } finally {
    await bootstrap.shutdown();
  }
  const client = makeClient(ks);
  const ddl = async (query: string) => {
    await client.execute(query);
    await schemaAgreement(client);
  };
  try {
    await client.connect();
    await ddl(
      `CREATE TABLE IF NOT EXISTS ${ks}.schema_migrations (version text PRIMARY KEY, checksum text, applied_at timestamp)`,
    );
    await ddl(`CREATE TABLE IF NOT EXISTS ${ks}.schema_migration_lease (id text PRIMARY KEY, owner text)`);
    if (!(await anyPending(client, ks, migrations))) return [];
    await takeLease(client, ks, owner, logger);
    try {
      return await applyPending(client, ks, migrations, ddl, logger);
    } finally {
      await client.execute(`DELETE FROM ${ks}.schema_migration_lease WHERE id = 'lease' IF owner = ?`, [owner], {
        prepare: true,
      });
    }
  } finally {
    await client.shutdown();
  }
}

/** Whether any migration is still to apply; refuses a migration changed after it was applied. */
async function anyPending(client: cassandra.Client, ks: string, migrations: Migration[]): Promise<boolean> {
  const done = new Map(
    (await client.execute(`SELECT version, checksum FROM ${ks}.schema_migrations`)).rows.map((r) => [
      r.version as string,
      r.checksum as string,
    ]),
  );
  for (const m of migrations) {
    const sum = done.get(m.version);
    if (sum && sum !== m.checksum) {
      throw new MigrationError(
        `migration ${m.version} was changed after it was applied: restore cql/${m.version}.cql as it was applied and put the change in a new numbered file`,
      );
    }
  }
  return migrations.some((m) => !done.has(m.version));
}

/** Takes the migration lease (it expires by itself if its holder dies), waiting up to 5 minutes for another's. */
async function takeLease(client: cassandra.Client, ks: string, owner: string, logger: Logger): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    const rs = await client.execute(
      `INSERT INTO ${ks}.schema_migration_lease (id, owner) VALUES ('lease', ?) IF NOT EXISTS USING TTL ${LEASE_SECONDS}`,
      [owner],
      { prepare: true },
    );
    const lease = rs.first();
    if (lease['[applied]'] || lease.owner === owner) return;
    if (Date.now() > deadline) {
      throw new MigrationError(
        'other instances kept migrating for 5 minutes: let them finish, then start again',
      );
    }
    logger.info('another instance is migrating; waiting');
    await delay(500 + Math.random() * 500);
  }
}

/** Under the lease, applies each migration not yet recorded, in order; returns the versions it applied. */
async function applyPending(
  client: cassandra.Client,
  ks: string,
  migrations: Migration[],
  ddl: (query: string) => Promise<void>,
  logger: Logger,
): Promise<string[]> {
  // Re-read under the lease: the other instance may have applied some meanwhile.
  const now = new Set(
    (await client.execute(`SELECT version FROM ${ks}.schema_migrations`)).rows.map((r) => r.version as string),
  );
  const applied: string[] = [];
  for (const m of migrations) {
    if (now.has(m.version)) continue;
    for (const statement of m.statements) await applyStatement(m.version, statement, ddl);
    await client.execute(
      `INSERT INTO ${ks}.schema_migrations (version, checksum, applied_at) VALUES (?, ?, toTimestamp(now()))`,
      [m.version, m.checksum],
      { prepare: true },
    );
    applied.push(m.version);
    logger.info({ version: m.version }, 'applied migration');
  }
  return applied;
}
