/**
 * A local Redis Cluster on loopback, from Debian's redis-server and redis-cli: three masters (ports 7101–7103), or
 * three masters and a replica of each (7101–7106, `replicas: 1`), unless REDIS_CLUSTER_PORTS says otherwise. For
 * running Parley as it runs past one Redis, and for the tests of sharded pub/sub and of failover. Data is not kept
 * (no RDB, no AOF): a master restarted is empty, as a failed-over shard's new master may be.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export class LocalRedisError extends Error {}

export interface RedisClusterOptions {
  /** Every node's port: the masters and, with replicas, as many again per replica (redis-cli picks which is which). */
  ports: number[];
  /**
   * Replicas per master (0 unless given): with 1, a dead master's replica is promoted within a few seconds
   * (cluster-node-timeout 2 s) and serves its slots. Taken when the cluster is first created.
   */
  replicas?: number;
  /** Where each master keeps its nodes.conf (its identity in the cluster). */
  dir: string;
  log: (line: string) => void;
}

export function defaultRedisClusterOptions({ replicas = 0 } = {}): RedisClusterOptions {
  const defaultPorts = Array.from({ length: 3 * (1 + replicas) }, (_, i) => 7101 + i).join(',');
  const ports = (process.env.REDIS_CLUSTER_PORTS ?? defaultPorts).split(',').map((p) => Number(p.trim()));
  return { ports, replicas, dir: resolve(process.env.REDIS_CLUSTER_DIR ?? '.redis/cluster'), log: (line) => console.error(`[redis] ${line}`) };
}

/** The nodes of the cluster as REDIS_CLUSTER_NODES takes them. */
export const clusterNodes = (opts: RedisClusterOptions) => opts.ports.map((port) => `127.0.0.1:${port}`).join(',');

function cli(port: number, ...args: string[]): { ok: boolean; out: string } {
  const run = spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 30_000 });
  if (run.error) throw new LocalRedisError(`redis-cli is missing: install it (apt-get install -y redis-server): ${run.error.message}`);
  return { ok: run.status === 0, out: `${run.stdout}${run.stderr}` };
}

const answers = (port: number) => cli(port, 'PING').out.trim() === 'PONG';

/**
 * Starts one node on `port` (a master, or a replica once the cluster makes it one), with the cluster state it had
 * (its nodes.conf), and waits for it to answer. A master that was failed over while it was down comes back as a
 * replica of its successor.
 */
export async function startMaster(opts: RedisClusterOptions, port: number): Promise<void> {
  if (answers(port)) return;
  const dir = join(opts.dir, String(port));
  mkdirSync(dir, { recursive: true });
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000',
      // A shard down leaves the others serving their channels and keys (the cluster does not stop as a whole).
      '--cluster-require-full-coverage', 'no',
      // A master whose slots all move away stays a master (the default makes it a replica of the one that took them),
      // and a replica stays with its master (the default may move it to a master left without one).
      '--cluster-allow-replica-migration', 'no',
      '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--logfile', join(dir, 'redis.log')],
    { stdio: 'ignore', detached: true },
  );
  child.on('error', () => {});
  child.unref();
  for (let i = 0; i < 100 && !answers(port); i++) await delay(100);
  if (!answers(port)) throw new LocalRedisError(`redis-server on ${port} did not answer (is redis-server installed? apt-get install -y redis-server); log: ${join(dir, 'redis.log')}`);
}

/** Stops one master at once (no save): as a shard dies. */
export function stopMaster(port: number): void {
  if (answers(port)) cli(port, 'SHUTDOWN', 'NOSAVE');
}

/** The pid of the node on `port`, or undefined when none answers there. */
function pidOf(port: number): number | undefined {
  const pid = /process_id:(\d+)/.exec(cli(port, 'INFO', 'server').out)?.[1];
  return pid ? Number(pid) : undefined;
}

/** Kills one node with SIGKILL (no goodbye to its clients or peers), as a crashed host does, and waits until it is gone. */
export async function killMaster(port: number): Promise<void> {
  const pid = pidOf(port);
  if (pid === undefined) return;
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && answers(port); i++) await delay(50);
}

/**
 * Stalls one node with SIGSTOP, as a host that hangs does (its connections stay open and nothing answers), until
 * the function returned is called (SIGCONT). Meanwhile nothing here may ask that node anything: redis-cli would wait
 * on it, synchronously, for up to 30 s (and so would every app sharing the caller's process).
 */
export function stallMaster(port: number): () => void {
  const pid = pidOf(port);
  if (pid === undefined) throw new LocalRedisError(`no redis-server answers on ${port}`);
  process.kill(pid, 'SIGSTOP');
  return () => process.kill(pid, 'SIGCONT');
}

/**
 * Whether the node on `port` sees the whole cluster well: every slot served, every node connected and none
 * suspected or failed (a shard down leaves the cluster's state "ok" here, where full coverage is not required),
 * and, if it is a replica, its link to its master up (a replica never synced is not promoted).
 */
function seesAllWell(port: number, nodeCount: number): boolean {
  const info = cli(port, 'CLUSTER', 'INFO').out;
  if (!/cluster_state:ok/.test(info) || !/cluster_slots_ok:16384\b/.test(info)) return false;
  const nodes = cli(port, 'CLUSTER', 'NODES').out.split('\n').filter((line) => line.trim() !== '');
  if (nodes.length !== nodeCount || !nodes.every((line) => line.includes(' connected') && !/\bfail\??\b/.test(line.split(' ')[2] ?? ''))) return false;
  const replication = cli(port, 'INFO', 'replication').out;
  return !/role:slave/.test(replication) || /master_link_status:up/.test(replication);
}

/** Waits until every node sees every slot served, every other node up, and every replica linked to its master. */
export async function untilClusterOk(opts: RedisClusterOptions, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (opts.ports.every((port) => answers(port) && seesAllWell(port, opts.ports.length))) return;
    await delay(200);
  }
  throw new LocalRedisError(`the Redis Cluster on ${clusterNodes(opts)} is not ok after ${timeoutMs} ms`);
}

/**
 * Starts every node and, the first time, joins them into one cluster with the slots split evenly over the masters
 * and `replicas` replicas given to each (redis-cli --cluster create). `fresh` forgets the cluster first.
 */
export async function startRedisCluster(opts: RedisClusterOptions, { fresh = false } = {}): Promise<void> {
  const replicas = opts.replicas ?? 0;
  if (opts.ports.length < 3 * (1 + replicas)) {
    throw new LocalRedisError(`${opts.ports.length} ports are too few for three masters with ${replicas} replica(s) each`);
  }
  if (fresh) {
    stopRedisCluster(opts);
    rmSync(opts.dir, { recursive: true, force: true });
  }
  for (const port of opts.ports) await startMaster(opts, port);
  const known = cli(opts.ports[0]!, 'CLUSTER', 'INFO').out;
  if (/cluster_slots_assigned:0\b/.test(known)) {
    const created = cli(opts.ports[0]!, '--cluster', 'create', ...opts.ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes');
    if (!created.ok) throw new LocalRedisError(`redis-cli --cluster create failed: ${created.out.trim().split('\n').slice(-3).join(' ')}`);
  } else {
    const size = Number(/cluster_known_nodes:(\d+)/.exec(known)?.[1]);
    if (size !== opts.ports.length) {
      throw new LocalRedisError(`the Redis Cluster in ${opts.dir} has ${size} nodes, not ${opts.ports.length}: start it with --fresh to make it again`);
    }
  }
  await untilClusterOk(opts);
  opts.log(`Redis Cluster up: REDIS_CLUSTER_NODES=${clusterNodes(opts)}`);
}

export function stopRedisCluster(opts: RedisClusterOptions): void {
  for (const port of opts.ports) stopMaster(port);
}
