// Migrations against the real node: two instances migrating one new keyspace at once.
import { describe, expect, it, inject } from 'vitest';
import cassandra from 'cassandra-driver';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { loadMigrations, migrate } from '../../src/db/cassandra/migrate.js';

describe('migrations', () => {
  it('lets two instances migrate one new keyspace at once without corrupting it', async () => {
    const keyspace = `parley_mig_${Date.now().toString(36)}`;
    const config = loadConfig({ CASSANDRA_KEYSPACE: keyspace });
    const contact = [inject('cassandraContactPoint')];
    const logger = pino({ level: 'silent' });
    const [first, second] = await Promise.all([
      migrate(config.cassandra, contact, logger),
      migrate(config.cassandra, contact, logger),
    ]);
    const all = loadMigrations().map((m) => m.version);
    // Each migration was applied by exactly one of the two.
    expect([...first, ...second].sort()).toEqual(all);

    const client = new cassandra.Client({ contactPoints: contact, localDataCenter: 'datacenter1' });
    try {
      const rows = (await client.execute(`SELECT version FROM ${keyspace}.schema_migrations`)).rows;
      expect(rows.map((r) => r.version).sort()).toEqual(all);
      const tables = (
        await client.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?', [keyspace], { prepare: true })
      ).rows.map((r) => r.table_name as string);
      expect(tables).toEqual(expect.arrayContaining(['users', 'revoked_tokens', 'schema_migrations']));
      // A third start applies nothing.
      expect(await migrate(config.cassandra, contact, logger)).toEqual([]);
    } finally {
      await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
      await client.shutdown();
    }
  });
});
