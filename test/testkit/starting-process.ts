/**
 * A Parley start in a process of its own (src/main.ts, configured by its
 * environment, as `npm start` runs it), watched from outside as an
 * orchestrator watches it: its /ready while it starts, what it prints on
 * stderr, and its exit code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { testEnv } from './app.js';
import { freePort } from './free-port.js';
import { withDeadline } from './poll.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

export interface StartingProcess {
  /** http://127.0.0.1:<port>, the port it was told to listen on. */
  url: string;
  /** Everything it printed on stderr so far. */
  stderr(): string;
  /** Resolves with its exit code once it exits. */
  exited: Promise<number | null>;
  /** GET /ready: its status and JSON body (null when none), or undefined while nothing listens. */
  ready(): Promise<{ status: number; body: { ready?: boolean; reason?: string } | null } | undefined>;
  /** SIGTERM (a graceful stop), and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts src/main.ts with the test environment and `env`, on a port of its own; returns at once. */
export async function spawnStart(env: Record<string, string>): Promise<StartingProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, ...testEnv(), PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => running.delete(child));
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    stderr: () => stderr,
    exited,
    async ready() {
      const res = await fetch(`${url}/ready`).catch(() => undefined);
      if (!res) return undefined;
      return { status: res.status, body: (await res.json().catch(() => null)) as { ready?: boolean; reason?: string } | null };
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Runs a start with `env` until it exits by itself, at most `timeoutMs`; its exit code and stderr. */
export async function runStartToExit(env: Record<string, string>, timeoutMs = 30_000): Promise<{ code: number | null; stderr: string }> {
  const start = await spawnStart(env);
  const code = await withDeadline(start.exited, timeoutMs, 'exit of the start', () => void start.stop());
  return { code, stderr: start.stderr() };
}

/** Lines of a stack trace ("    at f (file:1:2)"). */
export const STACK_LINE = /^\s+at /m;
