/**
 * `npm run cassandra` starts (or reuses) the local node; `npm run cassandra -- stop`
 * stops the node this project started; `-- fetch` only downloads the jars.
 * Options come from the environment (see README: CASSANDRA_DATA_DIR, CASSANDRA_HEAP,
 * CASSANDRA_EPHEMERAL, CASSANDRA_CACHE_DIR).
 */
import { defaultLocalNodeOptions, ensureLocalNode, fetchJars, LocalNodeError, stopLocalNode } from './launcher.js';

const command = process.argv[2] ?? 'start';
const opts = defaultLocalNodeOptions(process.argv.includes('--ephemeral') ? { ephemeral: true } : {});

try {
  if (command === 'start') await ensureLocalNode(opts);
  else if (command === 'stop') {
    // Without --ephemeral, stop whichever node this project started (kept-data or throwaway).
    await stopLocalNode(opts);
    if (!process.argv.includes('--ephemeral')) await stopLocalNode(defaultLocalNodeOptions({ ephemeral: true }));
  }
  else if (command === 'fetch') fetchJars(opts);
  else {
    console.error('usage: npm run cassandra -- [start|stop|fetch] [--ephemeral]');
    process.exit(64);
  }
} catch (err) {
  console.error(err instanceof LocalNodeError ? err.message : err);
  process.exit(1);
}
