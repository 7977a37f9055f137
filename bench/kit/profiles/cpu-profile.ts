/**
 * A CPU profile of Parley serving one request scenario: a Parley process of
 * its own with --cpu-prof, driven by autocannon at concurrency 16 (or
 * BENCH_CONNECTIONS: a login's refusals need 64) for 10 s,
 * then its self time summed two ways: by function, and by where the code
 * lives (a package, Node's own modules, Parley's layers, the engine's idle,
 * GC and program buckets). Only the samples taken while the load ran count:
 * the server's start-up (module loading, connecting) is left out. V8 stamps
 * samples on the monotonic clock process.hrtime reads, in microseconds. The .cpuprofile file lands in bench/profiles/ (not
 * committed) for Chrome's DevTools.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { projectPath } from '../../../src/project-root.js';
import { startServerProcess, type ServerProcess } from '../servers/server-process.js';
import { PRODUCTION_ENV } from '../remote-parley.js';
import type { RequestScenario } from '../requests/scenarios.js';
import { graphqlRequest, type HttpRequest } from '../requests/load.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  file: string;
  /** Shares of all samples (0–1), largest first. */
  byFunction: Array<[string, number]>;
  byPlace: Array<[string, number]>;
  /** The wall time the window's samples stand for (idle included), in ms: a share times this is time spent. */
  sampledMs: number;
  /** Requests served in the window, where a load generator counted them. */
  requests?: number;
}

/** Where CPU profiles land: bench/profiles/ (not committed). */
export const PROFILE_DIR = projectPath('bench', 'profiles') + '/';

/** Node's --cpu-prof arguments for a child whose profile goes to PROFILE_DIR. */
export function cpuProfArgs(): string[] {
  mkdirSync(PROFILE_DIR, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`];
}

/** The load's connections: 16, or BENCH_CONNECTIONS. */
const connections = () => Number(process.env.BENCH_CONNECTIONS ?? 16);

/** The monotonic clock V8 stamps profile samples with, in microseconds. */
export const profileClockUs = () => process.hrtime.bigint() / 1000n;

/** How a contender's process starts, with the node arguments given (Parley's own by default). */
export type StartServer = (env: Record<string, string>, nodeArgs: string[]) => Promise<ServerProcess>;

/**
 * How a profiled load runs: its connections (connections() by default), its request (the GraphQL one by default),
 * and a second load on the same server meanwhile (logins beside a history load), whose requests are not counted.
 */
export interface ProfileLoad {
  connections?: number;
  request?: (serverUrl: string, scenario: RequestScenario) => HttpRequest;
  beside?: { scenario: RequestScenario; connections: number };
}

export async function profileScenario(
  scenario: RequestScenario,
  env: Record<string, string> = PRODUCTION_ENV,
  start: StartServer = startServerProcess,
  how: ProfileLoad = {},
): Promise<CpuProfile> {
  const server = await start(env, cpuProfArgs());
  const requestOf = how.request ?? graphqlRequest;
  const run = (s: RequestScenario, n: number) => {
    const { url, body, headers } = requestOf(server.url, s);
    // Logins beside wait up to a minute in the hashing queue: autocannon's 10 s default would count them as timeouts.
    return autocannon({ url, method: 'POST', connections: n, duration: 10, headers, body, timeout: 60 });
  };
  const from = profileClockUs();
  const [load] = await Promise.all([run(scenario, how.connections ?? connections()), how.beside && run(how.beside.scenario, how.beside.connections)]);
  const to = profileClockUs();
  await server.stop();
  return { ...summarizeProfile(server.pid, from, to), requests: load.requests.total };
}

/**
 * The profile the stopped process `pid` wrote (Node names the file after its
 * pid), its samples between `from` and `to` (profileClockUs) summed by function and by place.
 */
export function summarizeProfile(pid: number, from: bigint, to: bigint): CpuProfile {
  // The newest of this pid's main thread (CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile; thread 0 is the
  // main one, the password-hashing threads write their own): an earlier run's process may have had the same pid.
  const file = readdirSync(PROFILE_DIR)
    .filter((f) => {
      const [, , , filePid, threadId] = f.split('.');
      return f.endsWith('.cpuprofile') && filePid === String(pid) && threadId === '0';
    })
    .sort()
    .at(-1);
  if (!file) throw new Error(`no profile written by process ${pid}`);
  const { nodes, startTime, samples, timeDeltas } = JSON.parse(readFileSync(PROFILE_DIR + file, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const hitsOf = new Map<number, number>();
  let at = BigInt(startTime);
  let sampledUs = 0;
  for (const [i, id] of samples.entries()) {
    at += BigInt(timeDeltas[i]!);
    if (at < from || at > to) continue;
    hitsOf.set(id, (hitsOf.get(id) ?? 0) + 1);
    sampledUs += timeDeltas[i]!;
  }
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let total = 0;
  for (const n of nodes) {
    const hits = hitsOf.get(n.id) ?? 0;
    total += hits;
    add(byFunction, functionOf(n.callFrame), hits);
    add(byPlace, placeOf(n.callFrame), hits);
  }
  const shares = (m: Map<string, number>) => [...m].map(([k, v]): [string, number] => [k, v / total]).sort((a, b) => b[1] - a[1]);
  return { file: PROFILE_DIR + file, byFunction: shares(byFunction), byPlace: shares(byPlace), sampledMs: sampledUs / 1000 };
}

function add(m: Map<string, number>, key: string, hits: number): void {
  m.set(key, (m.get(key) ?? 0) + hits);
}

/** A function, by its name, its file (in its package, or under src/ or bench/) and its line. */
function functionOf({ url, functionName, lineNumber }: ProfileNode['callFrame']): string {
  const where = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist\/)?(src|bench)\//, '$2/');
  return `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
}

/** A package (scoped ones whole), node:<module>, parley:src/<layer>/<domain>, or the engine's own bucket. */
function placeOf({ url, functionName }: ProfileNode['callFrame']): string {
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const own = /\/(?:dist\/)?((?:src|bench)\/[^/]+(?:\/[^/.]+)?)/.exec(url);
  if (own) return `parley:${own[1]}`;
  return url === '' ? functionName || '(native)' : url;
}

/** Shares of a profile (its byFunction or byPlace) as µs per request served in its window. */
export function usPerRequest(p: CpuProfile, shares: Array<[string, number]>): Array<[string, number]> {
  return shares.map(([k, share]): [string, number] => [k, (share * p.sampledMs * 1000) / (p.requests || 1)]);
}

/** µs per request the process was not idle: its main thread's (and the collector's) work for each request. */
export function busyUsPerRequest(p: CpuProfile): number {
  return usPerRequest(p, p.byPlace)
    .filter(([k]) => k !== '(idle)')
    .reduce((n, [, us]) => n + us, 0);
}

/** Keys of two per-request lists, each with both figures, the largest differences first. */
export function largestDifferences(ours: Array<[string, number]>, theirs: Array<[string, number]>): Array<[string, number, number]> {
  const us = new Map(ours);
  const them = new Map(theirs);
  const table = [...new Set([...us.keys(), ...them.keys()])].map((k): [string, number, number] => [k, us.get(k) ?? 0, them.get(k) ?? 0]);
  return table.sort((a, b) => Math.abs(b[1] - b[2]) - Math.abs(a[1] - a[2]));
}

/** A markdown list of the first `n` entries, as percentages of all samples. */
export function shareList(entries: Array<[string, number]>, n: number): string {
  return entries
    .slice(0, n)
    .map(([k, v]) => `${(100 * v).toFixed(1)} % ${k}`)
    .join('; ');
}

interface AllocationNode {
  callFrame: ProfileNode['callFrame'];
  selfSize: number;
  children: AllocationNode[];
}

/** What a contender allocates per request while serving a scenario, by function and by place (bytes, largest first). */
export interface Allocations {
  perRequest: number;
  byFunction: Array<[string, number]>;
  byPlace: Array<[string, number]>;
}

/**
 * A contender's allocations while autocannon runs `scenario` at 16 connections for 10 s: V8's sampling heap
 * profiler in the child (BENCH_ALLOCATIONS, see announceChild), collected objects included, from its start.
 */
export async function allocationsOf(
  scenario: RequestScenario,
  start: StartServer = startServerProcess,
  how: Pick<ProfileLoad, 'request'> = {},
  env: Record<string, string> = PRODUCTION_ENV,
): Promise<Allocations> {
  mkdirSync(PROFILE_DIR, { recursive: true });
  const file = `${PROFILE_DIR}allocations-${process.pid}-${Date.now()}.heapprofile`;
  const server = await start({ ...env, BENCH_ALLOCATIONS: file }, []);
  const { url, body, headers } = (how.request ?? graphqlRequest)(server.url, scenario);
  const load = await autocannon({ url, method: 'POST', connections: connections(), duration: 10, headers, body });
  await server.stop();
  const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: AllocationNode };
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let total = 0;
  const walk = (n: AllocationNode) => {
    total += n.selfSize;
    add(byFunction, functionOf(n.callFrame), n.selfSize);
    add(byPlace, placeOf(n.callFrame), n.selfSize);
    n.children.forEach(walk);
  };
  walk(head);
  const requests = load.requests.total;
  const per = (m: Map<string, number>) => [...m].map(([k, v]): [string, number] => [k, v / requests]).sort((a, b) => b[1] - a[1]);
  return { perRequest: total / requests, byFunction: per(byFunction), byPlace: per(byPlace) };
}
