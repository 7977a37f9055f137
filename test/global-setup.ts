/**
 * Once per test run: make sure a Cassandra node answers (starting a throwaway
 * one if needed), then create this run's own keyspace and apply cql/ to it, so
 * test files never pay for schema creation.
 */
import type { TestProject } from 'vitest/node';
import { pino } from 'pino';
import cassandra from 'cassandra-driver';
import { loadConfig } from '../src/config.js';
import { cqlAnswers, defaultLocalNodeOptions, ensureLocalNode } from '../src/db/local-node.js';
import { migrate } from '../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    keyspace: string;
    cassandraContactPoint: string;
  }
}

export default async function setup(project: TestProject) {
  // A node already answering on 9042 (a developer's `npm start` node, say) serves the tests: they only
  // ever touch their own keyspace, dropped afterwards. Otherwise start (or reuse) the throwaway node.
  const node = (await cqlAnswers('127.0.0.1', 9042))
    ? { host: '127.0.0.1', port: 9042 }
    : await ensureLocalNode(defaultLocalNodeOptions({ ephemeral: true }));
  const contactPoint = `${node.host}:${node.port}`;
  const keyspace = `parley_test_${Date.now().toString(36)}`;
  const started = Date.now();
  const config = loadConfig({ CASSANDRA_KEYSPACE: keyspace });
  await migrate(config.cassandra, [contactPoint], pino({ level: 'warn' }));
  process.stderr.write(`[test] keyspace ${keyspace} ready in ${Date.now() - started} ms\n`);
  project.provide('keyspace', keyspace);
  project.provide('cassandraContactPoint', contactPoint);

  // Drop this run's keyspace afterwards, so a reused node does not pile them up.
  return async () => {
    const client = new cassandra.Client({ contactPoints: [contactPoint], localDataCenter: config.cassandra.localDataCenter });
    try {
      await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
    } catch (err) {
      process.stderr.write(`[test] could not drop ${keyspace}: ${(err as Error).message}\n`);
    } finally {
      await client.shutdown();
    }
  };
}
