/**
 * A Parley server in a process of its own, started the way `npm start` starts
 * it (src/main.ts, configured by its environment), so a test can kill it with
 * SIGKILL mid-request: no shutdown hook runs, as in a real crash.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { readFile, readdir, readlink } from 'node:fs/promises';
import type { App } from '../../src/app.js';
import { testEnv, type StartOptions } from './app.js';

export interface AppProcess {
  /** Enough of App for the testkit's clients (gql, signUp…). */
  app: App;
  /** The pid of each instance that said it listens (one, or one per worker with WEB_CONCURRENCY). */
  pids: number[];
  /** SIGKILL, and resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a graceful stop), and resolves with the exit code. */
  stop(): Promise<number | null>;
}

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** Every server process still running: a test that failed before stopping its own leaves none behind. */
const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

/** Starts src/main.ts; resolves once `listeners` instances (workers, with WEB_CONCURRENCY) say they listen. */
export async function startAppProcess(opts: Omit<StartOptions, 'clock' | 'logs'> & { listeners?: number } = {}): Promise<AppProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, ...testEnv(opts), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const exitCode = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const exited = exitCode.then(() => undefined);
  const pids: number[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string; pid?: number };
        if (entry.msg !== 'Parley is listening' || !entry.url) return;
        pids.push(entry.pid!);
        if (pids.length === (opts.listeners ?? 1)) resolve(entry.url.replace(/\/graphql$/, ''));
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
    pids,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      return exitCode;
    },
  };
}

/**
 * Runs a command (a script of src/cli/) as an operator would, with the test's storage settings and `env`, until it
 * exits; its exit code and output. A test that fails before it exits leaves no process behind.
 */
export function runCommandToExit(script: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...testEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** Runs src/main.ts with `env` until it exits by itself (a refused configuration); its exit code and stderr. */
export async function runAppProcessToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, ...testEnv(), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stderr };
}

/**
 * Which of `pids` holds the server side of the loopback TCP connection whose client side is `clientPort` (Linux:
 * the process's socket inodes in /proc/<pid>/fd, matched against /proc/net/tcp{,6}). Undefined when none does.
 */
export async function pidServing(clientPort: number, serverPort: number, pids: number[]): Promise<number | undefined> {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address rem_address ... inode: the server side is local :serverPort, remote :clientPort.
      if (fields[1]?.endsWith(`:${hex(serverPort)}`) && fields[2]?.endsWith(`:${hex(clientPort)}`)) inodes.add(fields[9]!);
    }
  }
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return pid;
    }
  }
  return undefined;
}
