/**
 * `npm start`: one Parley instance, stopped gracefully on SIGTERM/SIGINT; or,
 * with WEB_CONCURRENCY above 1, a primary that runs that many instances as
 * workers on the same port (src/server/workers.ts).
 */
import cluster from 'node:cluster';
import { createApp } from './app.js';
import { loadConfig, type Config } from './config.js';
import { describeStartupFailure } from './server/startup-failure.js';
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
    // One line, whatever failed: what to fix or what the start waited for. An orchestrator's log of a crash loop
    // then says what is wrong; the full error (and the stack of one nobody foresaw) goes to the log.
    const failure = describeStartupFailure(err);
    logger.error(failure.foreseen ? { reason: failure.line, detail: (err as Error).message } : { err }, 'Parley cannot start');
    console.error(`Parley cannot start: ${failure.line}`);
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
