/**
 * A Parley server in a process of its own, started the way `npm start` starts
 * it (src/main.ts, configured by its environment), so a test can kill it with
 * SIGKILL mid-request: no shutdown hook runs, as in a real crash.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import type { App } from '../../src/app.js';
import { testEnv, type StartOptions } from './app.js';

export interface AppProcess {
  /** Enough of App for the testkit's clients (gql, signUp…). */
  app: App;
  /** SIGKILL, and resolves once the process is gone. */
  kill(): Promise<void>;
}

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export async function startAppProcess(opts: Omit<StartOptions, 'clock' | 'logs'> = {}): Promise<AppProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, ...testEnv(opts), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'Parley is listening' && entry.url) resolve(entry.url.replace(/\/graphql$/, ''));
      } catch {
        // not a log line
      }
    });
    void exited.then(() => reject(new Error('the server process exited before listening')));
  });
  const port = Number(new URL(url).port);
  const app = { url, port } as App;
  return {
    app,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
