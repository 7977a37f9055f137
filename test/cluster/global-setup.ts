/**
 * Once per cluster test run: the local three-node cluster answers (started, wiped, when it does not), and this
 * run's keyspace exists on it at replication factor 3 with cql/ applied. Test files reach it through the same
 * `inject` values as on one node, so the race tests run unchanged at RF 3.
 */
import type { TestProject } from 'vitest/node';
import { pino } from 'pino';
import cassandra from 'cassandra-driver';
import { loadConfig } from '../../src/config.js';
import { cqlAnswers } from '../../src/local-node/launcher.js';
import { CLUSTER_CQL_PORT, CLUSTER_HOSTS, clusterContactPoints, startCluster } from '../../src/local-node/cluster.js';
import { migrate } from '../../src/db/cassandra/migrate.js';

export default async function setup(project: TestProject) {
  const up = await Promise.all(CLUSTER_HOSTS.map((host) => cqlAnswers(host, CLUSTER_CQL_PORT)));
  if (!up.every(Boolean)) await startCluster({ fresh: true });
  const contactPoints = clusterContactPoints();
  const keyspace = `parley_rf3_${Date.now().toString(36)}`;
  const started = Date.now();
  const config = loadConfig({ CASSANDRA_KEYSPACE: keyspace, CASSANDRA_REPLICATION: 'datacenter1:3', CASSANDRA_CONTACT_POINTS: contactPoints });
  await migrate(config.cassandra, contactPoints.split(','), pino({ level: 'warn' }));
  process.stderr.write(`[test] keyspace ${keyspace} (RF 3) ready on the cluster in ${Date.now() - started} ms\n`);
  project.provide('keyspace', keyspace);
  project.provide('cassandraContactPoint', contactPoints);

  return async () => {
    const client = new cassandra.Client({ contactPoints: contactPoints.split(','), localDataCenter: config.cassandra.localDataCenter });
    try {
      await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
    } catch (err) {
      process.stderr.write(`[test] could not drop ${keyspace}: ${(err as Error).message}\n`);
    } finally {
      await client.shutdown();
    }
  };
}
