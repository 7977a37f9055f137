/**
 * `npm run readers:backfill`: copies the read markers written before
 * cql/017 into room_readers, so Message.seenBy lists those readers, against
 * the configured cluster (the same environment as `npm start`). Safe beside
 * running instances, and to run again; a run that stopped midway is resumed
 * where it got to (src/resolvers/rooms/readers-backfill.ts).
 */
import { loadConfig } from '../config.js';
import { isStorageUnavailable, type Database } from '../db/cassandra/client.js';
import { connectStorage } from '../db/cassandra/connect.js';
import { StorageNotReadyError } from '../db/cassandra/startup-wait.js';
import { ReadersBackfillStore } from '../db/rooms/readers-backfill.js';
import { backfillRoomReaders } from '../resolvers/rooms/readers-backfill.js';
import { createLogger } from '../observability/logging.js';

/** A progress line every this many pages (of Limits.room.readersBackfill.pageRows markers). */
const PAGES_PER_PROGRESS_LINE = 20;

/** The run, start to end: its own connection, closed whatever happens, so nothing of it is module state. */
async function main(): Promise<void> {
  let db: Database | undefined;
  try {
    const config = loadConfig();
    const logger = createLogger(config);
    // An operator at a terminal: told at once that Cassandra does not serve, unless they set how long to wait.
    const startupTimeoutMs = process.env.CASSANDRA_STARTUP_TIMEOUT_MS ? config.cassandra.startupTimeoutMs : 0;
    db = await connectStorage({ ...config.cassandra, startupTimeoutMs }, logger);
    const where = `${db.client.getState().getConnectedHosts().map((h) => h.address).join(', ')}, keyspace ${config.cassandra.keyspace}`;
    const started = performance.now();
    const done = await backfillRoomReaders(
      { readersBackfill: new ReadersBackfillStore(db) },
      { onPage: (progress) => progress.pages % PAGES_PER_PROGRESS_LINE === 0 && logger.info(progress, 'readers backfill in progress') },
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const from = done.resumedFrom === null ? 'from the start' : `resumed at token ${done.resumedFrom}`;
    console.log(`readers backfill (${where}): ${done.copied} read markers copied to room_readers, ${from}, in ${seconds} s`);
  } catch (err) {
    // An operator's command: say what failed in one line, without a stack (the driver's own messages embed
    // their inner errors' stacks); running it again resumes where it got to.
    const reason = isStorageUnavailable(err) || err instanceof StorageNotReadyError
      ? `Cassandra did not answer (${(err as Error).name}); check that it runs and CASSANDRA_CONTACT_POINTS`
      : String((err as Error).message ?? err).split('\n')[0];
    console.error(`readers backfill failed: ${reason} (running it again resumes where it stopped)`);
    process.exitCode = 1;
  } finally {
    // Open sockets would keep the process alive after a failure midway: close them, and exit whatever they do.
    await Promise.race([db?.shutdown(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]).catch(() => {});
    process.exit();
  }
}

await main();
