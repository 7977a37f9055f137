/**
 * A Parley instance in a process of its own, so a load generator in the
 * benchmark's process does not share its event loop. The parent starts it
 * with `startServerProcess(env)`; the child (this file run directly) prints
 * "READY <url>" once listening and stops on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { createApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { buildServices } from '../../../src/server/build-services.js';
import type { Services } from '../../../src/resolvers/services.js';
import { buildContext, type Context } from '../../../src/resolvers/context.js';
import { authenticate, bearerToken } from '../../../src/auth/authenticate.js';
import { benchEnv } from '../harness.js';

/** How the parent asks a child started with --expose-gc for a collection of each kind. */
const GC_SIGNALS = { full: 'SIGUSR2', reduce: 'SIGHUP' } as const;

export interface ServerProcess {
  url: string;
  /** The child's process id (its CPU time is read from /proc by the profilers). */
  pid: number;
  /**
   * A full garbage collection in the server, resolved once it is done, so a
   * memory figure read next counts what is live, not garbage not yet
   * collected. `reduce`: V8's memory-reducing collection (the one it runs
   * itself under memory pressure), which also hands back the pages the heap
   * had grown into and no longer uses. Only a server from startServerProcess
   * run with --expose-gc answers.
   */
  collectGarbage(kind?: 'full' | 'reduce'): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `env` goes into the child's real environment, not just its config: libraries
 * read some of it at load time (graphql-js drops its development checks under
 * NODE_ENV=production), as they would in a production process.
 */
export async function startServerProcess(env: Record<string, string>, nodeArgs: string[] = []): Promise<ServerProcess> {
  return startChildServer(fileURLToPath(import.meta.url), { ...(await benchEnv(env)), PARLEY_BENCH_CHILD: '1' }, nodeArgs);
}

/** The address a line of the child's output says it serves at, once it is ready: here "READY <url>". */
export type ReadyLine = (line: string) => string | undefined;
const readyLine: ReadyLine = (line) => (line.startsWith('READY ') ? line.slice(6) : undefined);

/**
 * Runs `entry` (compiled, or TypeScript through tsx) with `env` added and `nodeArgs` (such
 * as --cpu-prof) until `ready` finds its address in a line it prints; stop() sends SIGTERM.
 */
export async function startChildServer(entry: string, env: Record<string, string>, nodeArgs: string[] = [], ready: ReadyLine = readyLine): Promise<ServerProcess> {
  // Compiled (dist/bench/**/*.js) runs as is; TypeScript goes through tsx.
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...loader, entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const url = ready(line);
      if (url !== undefined) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
  });
  return {
    url,
    pid: child.pid!,
    collectGarbage: (kind = 'full') =>
      new Promise<void>((resolve) => {
        const collected = (line: string) => {
          if (line !== 'COLLECTED') return;
          lines.off('line', collected);
          resolve();
        };
        lines.on('line', collected);
        child.kill(GC_SIGNALS[kind]);
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * In a child: tells the parent where it listens, and stops with `stop` (or at once) on SIGTERM.
 * With BENCH_ALLOCATIONS=<file>, V8's sampling heap profiler records what the child allocates from
 * then on, collected objects included, and writes the profile to <file> when it stops.
 */
export async function announceChild(url: string, stop: () => Promise<void> = async () => {}): Promise<void> {
  const file = process.env.BENCH_ALLOCATIONS;
  const allocations = file ? await sampleAllocations() : undefined;
  process.stdout.write(`READY ${url}\n`);
  process.once('SIGTERM', () =>
    void stop()
      .then(async () => allocations && writeFileSync(file!, JSON.stringify(await allocations())))
      .finally(() => process.exit(0)),
  );
}

/** Starts sampling allocations (one sample per 16 KiB on average); the function returned stops and gives the profile. */
async function sampleAllocations(): Promise<() => Promise<unknown>> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  return async () => (await session.post('HeapProfiler.stopSampling')).profile;
}

/**
 * In a contender's child other than Parley (the floor, the peer servers): the
 * services Parley builds from the same environment (storage, pub/sub, tokens,
 * rate limits), so every contender runs the same use cases on the same parts.
 */
export function childServices(): Promise<Services> {
  return buildServices(loadConfig(process.env), pino({ level: 'warn' }));
}

/** Parley's context for one request, as the floor and the peer servers build it: same authentication, fresh loaders. */
export async function contextFor(services: Services, req: IncomingMessage): Promise<Context> {
  const session = await authenticate(services, bearerToken(req.headers.authorization));
  return buildContext(services, session, req.socket.remoteAddress ?? '', randomUUID());
}

if (process.env.PARLEY_BENCH_CHILD) {
  const app = createApp({ config: loadConfig(process.env), logger: pino({ level: 'warn' }) });
  await app.start();
  const gc = (globalThis as { gc?: (options?: { type: 'major'; execution: 'sync'; flavor: 'regular' | 'last-resort' }) => void }).gc;
  if (gc) {
    for (const [kind, signal] of Object.entries(GC_SIGNALS)) {
      process.on(signal, () => {
        gc({ type: 'major', execution: 'sync', flavor: kind === 'reduce' ? 'last-resort' : 'regular' });
        process.stdout.write('COLLECTED\n');
      });
    }
  }
  void announceChild(app.url, () => app.stop());
}
