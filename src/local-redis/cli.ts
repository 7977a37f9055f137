/**
 * `npm run redis -- cluster start [--fresh] [--replicas N]|stop`: the local Redis Cluster, three masters, or three
 * masters with N replicas each (see cluster.ts; REDIS_CLUSTER_PORTS, REDIS_CLUSTER_DIR).
 */
import { defaultRedisClusterOptions, LocalRedisError, startRedisCluster, stopRedisCluster } from './cluster.js';

const USAGE = 'usage: npm run redis -- cluster start [--fresh] [--replicas N] | cluster stop [--replicas N]';
const args = process.argv.slice(2);
const [command, subcommand] = args;
const replicasAt = args.indexOf('--replicas');
const replicas = replicasAt === -1 ? 0 : Number(args[replicasAt + 1]);
try {
  if (!Number.isInteger(replicas) || replicas < 0) throw new LocalRedisError(`--replicas takes a number of replicas per master (0, 1, …)\n${USAGE}`);
  // The replicas' ports follow the masters' (7104–7106): stopping names them the same way.
  const opts = defaultRedisClusterOptions({ replicas });
  if (command === 'cluster' && subcommand === 'start') await startRedisCluster(opts, { fresh: args.includes('--fresh') });
  else if (command === 'cluster' && subcommand === 'stop') stopRedisCluster(opts);
  else {
    console.error(USAGE);
    process.exit(64);
  }
} catch (err) {
  console.error(err instanceof LocalRedisError ? err.message : err);
  process.exit(1);
}
