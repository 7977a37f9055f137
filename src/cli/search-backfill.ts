/**
 * `npm run search:backfill`: gives search terms to the room messages posted
 * before search existed (cql/008), against the configured cluster (the same
 * environment as `npm start`). Safe beside running instances, and to run
 * again: it rewrites nothing already indexed, and yields to edits, deletions
 * and hides (src/resolvers/rooms/messages/search-backfill.ts).
 */
import { loadConfig } from '../config.js';
import { isStorageUnavailable, type Database } from '../db/cassandra/client.js';
import { connectStorage } from '../db/cassandra/connect.js';
import { StorageNotReadyError } from '../db/cassandra/startup-wait.js';
import { createStores } from '../db/stores.js';
import { backfillSearchTerms } from '../resolvers/rooms/messages/search-backfill.js';
import { createLogger } from '../observability/logging.js';

/** A progress line every this many pages (of Limits.room.search.backfillPageRows messages). */
const PAGES_PER_PROGRESS_LINE = 20;

let db: Database | undefined;
try {
  const config = loadConfig();
  const logger = createLogger(config);
  // An operator at a terminal: told at once that Cassandra does not serve, unless they set how long to wait.
  const startupTimeoutMs = process.env.CASSANDRA_STARTUP_TIMEOUT_MS ? config.cassandra.startupTimeoutMs : 0;
  db = await connectStorage({ ...config.cassandra, startupTimeoutMs }, logger);
  const where = `${db.client.getState().getConnectedHosts().map((h) => h.address).join(', ')}, keyspace ${config.cassandra.keyspace}`;
  const started = performance.now();
  let pages = 0;
  const done = await backfillSearchTerms(createStores(db), (progress) => {
    if (++pages % PAGES_PER_PROGRESS_LINE === 0) logger.info(progress, 'search backfill in progress');
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `search backfill (${where}): ${done.scanned} messages read, ${done.indexed} given their search terms, ` +
      `${done.changedMeanwhile} changed meanwhile (left to that change), in ${seconds} s`,
  );
} catch (err) {
  // An operator's command: say what failed in one line, without a stack (the driver's own messages embed
  // their inner errors' stacks); running it again is safe.
  const reason = isStorageUnavailable(err) || err instanceof StorageNotReadyError
    ? `Cassandra did not answer (${(err as Error).name}); check that it runs and CASSANDRA_CONTACT_POINTS`
    : String((err as Error).message ?? err).split('\n')[0];
  console.error(`search backfill failed: ${reason} (running it again is safe)`);
  process.exitCode = 1;
} finally {
  // Open sockets would keep the process alive after a failure midway: close them, and exit whatever they do.
  await Promise.race([db?.shutdown(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]).catch(() => {});
  process.exit();
}
