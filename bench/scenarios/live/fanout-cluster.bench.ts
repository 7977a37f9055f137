/**
 * Live fan-out through a Redis Cluster: bench/scenarios/live/fanout.bench.ts's ramp and
 * contenders (Parley, its delivery alone, the relay floor), with every one of
 * them on the cluster's sharded pub/sub (REDIS_CLUSTER_NODES, or the local
 * three-master cluster, started when it does not answer).
 */
import { runFanout } from './fanout.bench.js';
import { redisCluster } from '../../kit/fanout/bus.js';
import { clusterNodes, defaultRedisClusterOptions, startRedisCluster } from '../../../src/local-redis/cluster.js';

export default async function run(): Promise<string> {
  let nodes = process.env.REDIS_CLUSTER_NODES;
  if (!nodes) {
    const opts = defaultRedisClusterOptions();
    await startRedisCluster(opts);
    nodes = clusterNodes(opts);
  }
  return runFanout(redisCluster(nodes));
}
