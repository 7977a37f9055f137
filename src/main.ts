/**
 * `npm start`: one Parley instance, stopped gracefully on SIGTERM/SIGINT; or,
 * with WEB_CONCURRENCY above 1, a primary that runs that many instances as
 * workers on the same port (src/server/workers.ts).
 */
import cluster from 'node:cluster';
import { createApp } from './app.js';
import { loadConfig, SettingError, type Config } from './config.js';
import { LocalNodeError } from './local-node/launcher.js';
import { StorageNotReadyError } from './db/cassandra/startup-wait.js';
import { createLogger } from './observability/logging.js';
import { runPrimary } from './server/workers.js';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  // A configuration mistake is the operator's to fix: say what it is, without a stack.
  console.error(`Parley cannot start: ${(err as Error).message}`);
  process.exit(1);
}
const logger = createLogger(config);

if (config.webConcurrency > 1 && cluster.isPrimary) {
  await runPrimary(config, logger);
} else {
  await runInstance();
}

async function runInstance(): Promise<void> {
  const app = createApp({ config, logger });
  try {
    await app.start();
  } catch (err) {
    // What the operator must fix or wait for, in one line; anything else with its stack.
    const said = err instanceof LocalNodeError || err instanceof StorageNotReadyError || err instanceof SettingError;
    console.error(said ? `Parley cannot start: ${(err as Error).message}` : err);
    process.exit(1);
  }

  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, async () => {
      if (stopping) return;
      stopping = true;
      const timer = setTimeout(() => process.exit(1), 15_000).unref();
      try {
        await app.stop();
        clearTimeout(timer);
        process.exit(0);
      } catch (err) {
        console.error(err);
        process.exit(1);
      }
    });
  }
}
