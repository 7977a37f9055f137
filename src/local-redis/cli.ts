/**
 * `npm run redis -- cluster start [--fresh]|stop`: the local three-master Redis Cluster (see cluster.ts;
 * REDIS_CLUSTER_PORTS, REDIS_CLUSTER_DIR).
 */
import { defaultRedisClusterOptions, LocalRedisError, startRedisCluster, stopRedisCluster } from './cluster.js';

const [command, subcommand] = process.argv.slice(2);
const opts = defaultRedisClusterOptions();
try {
  if (command === 'cluster' && subcommand === 'start') await startRedisCluster(opts, { fresh: process.argv.includes('--fresh') });
  else if (command === 'cluster' && subcommand === 'stop') stopRedisCluster(opts);
  else {
    console.error('usage: npm run redis -- cluster start [--fresh] | cluster stop');
    process.exit(64);
  }
} catch (err) {
  console.error(err instanceof LocalRedisError ? err.message : err);
  process.exit(1);
}
