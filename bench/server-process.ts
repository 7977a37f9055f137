/**
 * A Parley instance in a process of its own, so a load generator in the
 * benchmark's process does not share its event loop. The parent starts it
 * with `startServerProcess(env)`; the child (this file run directly) prints
 * "READY <url>" once listening and stops on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { benchApp } from './harness.js';

export interface ServerProcess {
  url: string;
  stop(): Promise<void>;
}

export function startServerProcess(env: Record<string, string>, nodeArgs: string[] = []): Promise<ServerProcess> {
  return startChildServer(fileURLToPath(import.meta.url), { PARLEY_BENCH_CHILD: JSON.stringify(env) }, nodeArgs);
}

/**
 * Runs `entry` (TypeScript, through tsx) with `env` added and `nodeArgs` (such
 * as --cpu-prof) until it prints "READY <url>"; stop() sends SIGTERM.
 */
export async function startChildServer(entry: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (line.startsWith('READY ')) resolve(line.slice(6));
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

if (process.env.PARLEY_BENCH_CHILD) {
  const app = await benchApp({ env: JSON.parse(process.env.PARLEY_BENCH_CHILD) as Record<string, string> });
  process.stdout.write(`READY ${app.url}\n`);
  process.once('SIGTERM', () => void app.stop().then(() => process.exit(0)));
}
