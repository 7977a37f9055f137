/**
 * How an operator's command (`npm run search:backfill`, `readers:backfill`, `seats:backfill`) runs against the
 * configured cluster, the same environment as `npm start`: its own connection, closed whatever happens; one line
 * said on success, one line naming the cause on failure (exit code 1), never a stack.
 */
import { loadConfig } from '../config.js';
import { isStorageUnavailable, type Database } from '../db/cassandra/client.js';
import { connectStorage } from '../db/cassandra/connect.js';
import { StorageNotReadyError } from '../db/cassandra/startup-wait.js';
import type { Logger } from 'pino';
import { createLogger } from '../observability/logging.js';

export interface OperatorCommand {
  /** What it is called in its lines: "readers backfill". */
  name: string;
  /** What running it again does, told after a failure: "running it again resumes where it stopped". */
  again: string;
  /** The work; answers what it did, for the success line (after where it ran, before how long it took). */
  run: (db: Database, logger: Logger) => Promise<string>;
}

export async function runOperatorCommand({ name, again, run }: OperatorCommand): Promise<never> {
  let db: Database | undefined;
  try {
    const config = loadConfig();
    const logger = createLogger(config);
    // An operator at a terminal: told at once that Cassandra does not serve, unless they set how long to wait.
    const startupTimeoutMs = process.env.CASSANDRA_STARTUP_TIMEOUT_MS ? config.cassandra.startupTimeoutMs : 0;
    db = await connectStorage({ ...config.cassandra, startupTimeoutMs }, logger);
    const where = `${db.client.getState().getConnectedHosts().map((h) => h.address).join(', ')}, keyspace ${config.cassandra.keyspace}`;
    const started = performance.now();
    const done = await run(db, logger);
    console.log(`${name} (${where}): ${done}, in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } catch (err) {
    // One line, without a stack (the driver's own messages embed their inner errors' stacks).
    const reason = isStorageUnavailable(err) || err instanceof StorageNotReadyError
      ? `Cassandra did not answer (${(err as Error).name}); check that it runs and CASSANDRA_CONTACT_POINTS`
      : String((err as Error).message ?? err).split('\n')[0];
    console.error(`${name} failed: ${reason} (${again})`);
    process.exitCode = 1;
  } finally {
    // Open sockets would keep the process alive after a failure midway: close them, and exit whatever they do.
    await Promise.race([db?.shutdown(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]).catch(() => {});
  }
  process.exit();
}
