/**
 * Once per cluster test run: the local three-node cluster answers with one schema (started, wiped, when it does
 * not), and this run's keyspace exists on it at replication factor 3 with cql/ applied. Test files reach it through
 * the same `inject` values as on one node, so the race tests run unchanged at RF 3.
 *
 * The keyspace is left in place afterwards: dropping it right after a node was killed and started again (as the
 * node-loss tests do) can leave that node's schema apart from the others' for good (Cassandra 5.0.9 fails the
 * drop on it with "Unknown CF" while it replays its commit log). A cluster whose nodes disagree is started fresh.
 */
import type { TestProject } from 'vitest/node';
import { pino } from 'pino';
import cassandra from 'cassandra-driver';
import { loadConfig } from '../../src/config.js';
import { cqlAnswers } from '../../src/local-node/launcher.js';
import { CLUSTER_CQL_PORT, CLUSTER_HOSTS, clusterContactPoints, startCluster } from '../../src/local-node/cluster.js';
import { migrate } from '../../src/db/cassandra/migrate.js';
import { redisForTestRun } from '../testkit/faults/redis-server.js';

export default async function setup(project: TestProject) {
  const contactPoints = clusterContactPoints();
  const up = await Promise.all(CLUSTER_HOSTS.map((host) => cqlAnswers(host, CLUSTER_CQL_PORT)));
  if (!up.every(Boolean) || !(await agreesOnSchema(contactPoints))) await startCluster({ fresh: true });
  const keyspace = `parley_rf3_${Date.now().toString(36)}`;
  const started = Date.now();
  const config = loadConfig({ CASSANDRA_KEYSPACE: keyspace, CASSANDRA_REPLICATION: 'datacenter1:3', CASSANDRA_CONTACT_POINTS: contactPoints });
  await migrate(config.cassandra, contactPoints.split(','), pino({ level: 'warn' }));
  process.stderr.write(`[test] keyspace ${keyspace} (RF 3) ready on the cluster in ${Date.now() - started} ms\n`);
  project.provide('keyspace', keyspace);
  project.provide('cassandraContactPoint', contactPoints);
  const redis = await redisForTestRun((line) => process.stderr.write(`${line}\n`));
  project.provide('redisUrl', redis.url);
  return () => redis.stop();
}

/** Whether every node of the cluster has the same schema version. */
async function agreesOnSchema(contactPoints: string): Promise<boolean> {
  const client = new cassandra.Client({ contactPoints: contactPoints.split(','), localDataCenter: 'datacenter1' });
  try {
    await client.connect();
    const versions = new Set<string>();
    for (const host of CLUSTER_HOSTS) {
      const rs = await client.execute('SELECT schema_version FROM system.local', [], { host: client.hosts.get(`${host}:${CLUSTER_CQL_PORT}`) });
      versions.add(String(rs.first()?.schema_version));
    }
    return versions.size === 1;
  } catch {
    return false;
  } finally {
    await client.shutdown();
  }
}
