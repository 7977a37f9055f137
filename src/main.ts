/** `npm start`: one Parley instance, stopped gracefully on SIGTERM/SIGINT. */
import { createApp } from './app.js';
import { LocalNodeError } from './local-node/launcher.js';

const app = createApp();

try {
  await app.start();
} catch (err) {
  console.error(err instanceof LocalNodeError ? err.message : err);
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
