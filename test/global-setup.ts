/**
 * Once per test run: make sure a Cassandra node answers (starting a throwaway
 * one if needed), then create this run's own keyspace and apply cql/ to it, so
 * test files never pay for schema creation; and a Redis (the one on 6379, or a
 * throwaway redis-server).
 */
import type { TestProject } from 'vitest/node';
import { pino } from 'pino';
import cassandra from 'cassandra-driver';
import { loadConfig } from '../src/config.js';
import { nodeForThrowawayWork } from '../src/local-node/launcher.js';
import { migrate } from '../src/db/cassandra/migrate.js';
import { redisForTestRun } from './testkit/faults/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    keyspace: string;
    cassandraContactPoint: string;
    redisUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // A developer's `npm start` node on 9042 serves too: tests only touch their own keyspace, dropped afterwards.
  const node = await nodeForThrowawayWork();
  const contactPoint = `${node.host}:${node.port}`;
  const keyspace = `parley_test_${Date.now().toString(36)}`;
  const started = Date.now();
  const config = loadConfig({ CASSANDRA_KEYSPACE: keyspace });
  await migrate(config.cassandra, [contactPoint], pino({ level: 'warn' }));
  process.stderr.write(`[test] keyspace ${keyspace} ready in ${Date.now() - started} ms\n`);
  project.provide('keyspace', keyspace);
  project.provide('cassandraContactPoint', contactPoint);
  const redis = await redisForTestRun((line) => process.stderr.write(`${line}\n`));
  project.provide('redisUrl', redis.url);

  // Drop this run's keyspace afterwards, so a reused node does not pile them up.
  return async () => {
    await redis.stop();
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
