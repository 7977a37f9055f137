/**
 * `npm run cassandra` starts (or reuses) the local node; `npm run cassandra -- stop`
 * stops the node this project started; `-- fetch` only downloads the jars;
 * `-- cluster start|stop` starts or stops the local three-node cluster (127.0.0.2–.4;
 * `cluster start --fresh` wipes its data first). Options come from the environment
 * (see docs/configuration.md: CASSANDRA_DATA_DIR, CASSANDRA_HEAP, CASSANDRA_EPHEMERAL, CASSANDRA_CACHE_DIR,
 * CASSANDRA_CLUSTER_DIR, CASSANDRA_CLUSTER_HEAP).
 */
import { defaultLocalNodeOptions, ensureLocalNode, fetchJars, LocalNodeError, stopLocalNode } from './launcher.js';
import { clusterContactPoints, startCluster, stopCluster } from './cluster.js';

const [command = 'start', subcommand] = process.argv.slice(2);
const opts = defaultLocalNodeOptions(process.argv.includes('--ephemeral') ? { ephemeral: true } : {});

try {
  if (command === 'start') await ensureLocalNode(opts);
  else if (command === 'stop') {
    // Without --ephemeral, stop whichever node this project started (kept-data or throwaway).
    await stopLocalNode(opts);
    if (!process.argv.includes('--ephemeral')) await stopLocalNode(defaultLocalNodeOptions({ ephemeral: true }));
  } else if (command === 'fetch') fetchJars(opts);
  else if (command === 'cluster' && subcommand === 'start') {
    fetchJars(opts);
    await startCluster({ fresh: process.argv.includes('--fresh') });
    opts.log(`cluster up: CASSANDRA_CONTACT_POINTS=${clusterContactPoints()} CASSANDRA_REPLICATION=datacenter1:3`);
  } else if (command === 'cluster' && subcommand === 'stop') await stopCluster();
  else {
    console.error('usage: npm run cassandra -- [start|stop|fetch] [--ephemeral] | cluster start [--fresh] | cluster stop');
    process.exit(64);
  }
} catch (err) {
  console.error(err instanceof LocalNodeError ? err.message : err);
  process.exit(1);
}
