/**
 * A local three-node Apache Cassandra cluster on loopback (127.0.0.2, .3 and .4), from the same jars as the single
 * node: each node has its own data and log folder and JMX port, one token of the ring spaced evenly, and the first
 * two nodes as seeds. It is for what only a cluster shows: replication factor 3 with quorums, hints, coordinator
 * failover and batchlog placement. Every address of 127.0.0.0/8 reaches loopback on Linux, so each node listens on
 * the usual ports of an address of its own.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { cqlAnswers, ensureLocalNode, fetchJars, stopLocalNode } from './launcher.js';
import { CLUSTER_NAME, JAVA17_MODULE_FLAGS } from './node-config.js';
import { defaultLocalNodeOptions, LocalNodeError, type LocalNodeOptions } from './options.js';

export const CLUSTER_HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;
export const CLUSTER_CQL_PORT = 9042;
/**
 * Two seeds: a seed that restarts (in a rolling restart) learns the ring from the other one. With one seed, a
 * restarted seed had only non-seed peers to ask and could fail its start.
 */
const SEEDS = [CLUSTER_HOSTS[0], CLUSTER_HOSTS[1]];

/** The contact points a server or test names to reach the cluster (CASSANDRA_CONTACT_POINTS). */
export const clusterContactPoints = () => CLUSTER_HOSTS.map((host) => `${host}:${CLUSTER_CQL_PORT}`).join(',');

/** Murmur3's ring split evenly: node i owns the token i/n of the way round from the lowest. */
function initialToken(index: number): string {
  const span = 2n ** 64n / BigInt(CLUSTER_HOSTS.length);
  return String(-(2n ** 63n) + span * BigInt(index));
}

/** Node `index` (0, 1, 2) of the local cluster. */
export function clusterNodeOptions(index: number, overrides: Partial<LocalNodeOptions> = {}): LocalNodeOptions {
  const root = resolve(process.env.CASSANDRA_CLUSTER_DIR ?? '.cassandra/cluster');
  return defaultLocalNodeOptions({
    dataDir: join(root, `node${index + 1}`),
    host: CLUSTER_HOSTS[index]!,
    port: CLUSTER_CQL_PORT,
    storagePort: 7000,
    // JMX listens on 127.0.0.1 whatever the node's address: a port each.
    jmxPort: 7201 + index,
    heap: process.env.CASSANDRA_CLUSTER_HEAP ?? '512M',
    ephemeral: false,
    clusterMember: { clusterName: CLUSTER_NAME.cluster, seeds: SEEDS.map((host) => `${host}:7000`).join(','), initialToken: initialToken(index) },
    ...overrides,
  });
}

/**
 * Starts the three nodes, the first seed first, then the other two side by side; resolves once each answers CQL.
 * With `fresh`, every node's data is wiped first (a cluster for one test run).
 */
export async function startCluster({ fresh = false, log }: { fresh?: boolean; log?: (line: string) => void } = {}): Promise<void> {
  const nodes = CLUSTER_HOSTS.map((_, i) => clusterNodeOptions(i, log ? { log } : {}));
  if (fresh) {
    await stopCluster({ log });
    for (const node of nodes) rmSync(node.dataDir, { recursive: true, force: true });
  }
  await ensureLocalNode(nodes[0]);
  await Promise.all(nodes.slice(1).map((node) => ensureLocalNode(node)));
  await ringUp(log);
}

export async function stopCluster({ log }: { log?: (line: string) => void } = {}): Promise<void> {
  await Promise.all(CLUSTER_HOSTS.map((_, i) => stopLocalNode(clusterNodeOptions(i, log ? { log } : {}))));
}

/** The pid of node `index` as started by this project, if it runs. */
export function clusterNodePid(index: number): number | undefined {
  try {
    const pid = Number(readFileSync(join(clusterNodeOptions(index).dataDir, 'cassandra.pid'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether node `index` answers CQL now. */
export const clusterNodeAnswers = (index: number) => cqlAnswers(CLUSTER_HOSTS[index]!, CLUSTER_CQL_PORT);

/** Kills node `index` with SIGKILL, as a crash or an OOM killer would, and waits until its CQL port is closed. */
export async function killClusterNode(index: number): Promise<void> {
  const pid = clusterNodePid(index);
  if (!pid) throw new LocalNodeError(`cluster node ${index + 1} is not running`);
  process.kill(pid, 'SIGKILL');
  while (await cqlAnswers(CLUSTER_HOSTS[index]!, CLUSTER_CQL_PORT, 200)) await delay(100);
}

/**
 * Starts node `index` again on its data (after a kill or a stop), and waits until every running node sees every
 * running node up: answering CQL is not yet being back in the ring. An operator restarts the next node of a
 * rolling restart only then; a coordinator that still counted this one down when the next went would have one
 * live replica of three, and refuse quorum requests.
 */
export async function restartClusterNode(index: number, log?: (line: string) => void): Promise<void> {
  await ensureLocalNode(clusterNodeOptions(index, log ? { log } : {}));
  await ringUp(log);
}

const run = promisify(execFile);

/** The jars the nodes run from, as a classpath for nodetool. */
function toolsClasspath(): string {
  const libDir = fetchJars(clusterNodeOptions(0));
  return readdirSync(libDir).filter((f) => f.endsWith('.jar')).map((f) => join(libDir, f)).join(':');
}

/** The addresses node `index` sees Up and Normal, as `nodetool status` over its JMX port says. */
async function seenUp(index: number, classpath: string): Promise<Set<string>> {
  const args = ['-Xmx128m', ...JAVA17_MODULE_FLAGS, '-cp', classpath, 'org.apache.cassandra.tools.NodeTool', '-h', '127.0.0.1', '-p', String(7201 + index), 'status'];
  const { stdout } = await run('java', args, { timeout: 30_000, env: { ...process.env, HOME: clusterNodeOptions(index).dataDir } });
  return new Set([...stdout.matchAll(/^UN\s+(\S+)/gm)].map((m) => m[1]!));
}

/**
 * Waits until every node that answers CQL sees each of them Up and Normal. On the 2-core machines CI runs on, a node
 * restarted under load has been seen stalled for over a minute (its log: "Not marking nodes down due to local pause
 * of 73 s"), so the wait is long, and its looks are spaced: each starts a JVM per node.
 */
async function ringUp(log?: (line: string) => void, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const classpath = toolsClasspath();
  for (;;) {
    const running = (await Promise.all(CLUSTER_HOSTS.map(async (host, i) => ((await cqlAnswers(host, CLUSTER_CQL_PORT)) ? i : -1)))).filter((i) => i >= 0);
    const views = await Promise.all(running.map((i) => seenUp(i, classpath).catch(() => new Set<string>())));
    if (views.every((up) => running.every((i) => up.has(CLUSTER_HOSTS[i]!)))) {
      log?.(`nodes ${running.map((i) => i + 1).join(', ')} all see each other up`);
      return;
    }
    if (Date.now() > deadline) {
      const seen = running.map((i, k) => `node ${i + 1} sees up ${[...views[k]!].join(', ') || 'none'}`).join('; ');
      throw new LocalNodeError(`the cluster's nodes did not all see each other up within ${timeoutMs / 1000} s (${seen})`);
    }
    // Each look starts a JVM per node (nodetool): about a second of CPU each, taken from the nodes still settling.
    await delay(5_000);
  }
}

/**
 * Pauses node `index` with SIGSTOP, as a long GC pause or a stalled disk would: its sockets stay open, nothing
 * answers. The result resumes it (SIGCONT); call it whatever happens.
 */
export function pauseClusterNode(index: number): () => void {
  const pid = clusterNodePid(index);
  if (!pid) throw new LocalNodeError(`cluster node ${index + 1} is not running`);
  process.kill(pid, 'SIGSTOP');
  return () => process.kill(pid, 'SIGCONT');
}
