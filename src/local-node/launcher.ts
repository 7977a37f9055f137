/**
 * Starts (or reuses) one real Apache Cassandra node on loopback, assembled from
 * Maven Central: Maven Central carries `cassandra-all` and its runtime jars but
 * no binary tarball, so we build the classpath ourselves and start
 * CassandraDaemon under the installed Java 17.
 *
 * The jars and generated config live in a cache folder outside the work tree;
 * the node's data lives in a (git-ignored) data folder of the project.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import cassandra from 'cassandra-driver';
import { CASSANDRA_VERSION, defaultLocalNodeOptions, LocalNodeError, type LocalNodeOptions } from './options.js';
import { checkJava, fetchJars } from './jars.js';
import { CLUSTER_NAME, cassandraYaml, JAVA17_MODULE_FLAGS, LOGBACK } from './node-config.js';

export { CASSANDRA_VERSION, defaultLocalNodeOptions, EPHEMERAL_PORTS, LocalNodeError, type LocalNodeOptions } from './options.js';
export { fetchJars } from './jars.js';

/** True when something accepts TCP connections and answers a CQL OPTIONS frame. */
export async function cqlAnswers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  // A native-protocol v4 OPTIONS request: version 0x04, flags 0, stream 0, opcode 0x05, length 0.
  const options = Buffer.from([0x04, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00]);
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write(options));
    // Any response frame (SUPPORTED opcode 0x06) means the native transport is up.
    socket.once('data', (data) => finish(data.length >= 9 && (data[4] === 0x06 || data[4] === 0x00)));
  });
}

/** The cluster_name of the node on host:port, or undefined when it cannot be read. */
async function clusterName(host: string, port: number): Promise<string | undefined> {
  const client = new cassandra.Client({ contactPoints: [`${host}:${port}`], localDataCenter: 'datacenter1' });
  try {
    await client.connect();
    const rs = await client.execute('SELECT cluster_name FROM system.local');
    return rs.first()?.cluster_name as string | undefined;
  } catch {
    return undefined; // another data center or auth: not a node this project started
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}

function pidFile(opts: LocalNodeOptions): string {
  return join(opts.dataDir, 'cassandra.pid');
}

/** Alive and really our Cassandra: a recorded pid may have been recycled by another process. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('CassandraDaemon');
  } catch {
    return true; // no /proc (macOS): trust the signal check
  }
}

function readPid(opts: LocalNodeOptions): number | undefined {
  try {
    const pid = Number(readFileSync(pidFile(opts), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export interface LocalNode {
  host: string;
  port: number;
  /** True when this call started the node, false when one was already answering. */
  started: boolean;
  pid?: number;
}

/** Starts the local node unless one already answers CQL on the port. */
export async function ensureLocalNode(opts: LocalNodeOptions = defaultLocalNodeOptions()): Promise<LocalNode> {
  if (await cqlAnswers(opts.host, opts.port)) {
    // Data written to a throwaway node is lost at its next start (and after a crash): keep real data off it.
    if (!opts.ephemeral && (await clusterName(opts.host, opts.port)) === CLUSTER_NAME.ephemeral) {
      throw new LocalNodeError(
        `The node answering on ${opts.host}:${opts.port} is a throwaway test node (wiped at every start), ` +
          'so the server will not keep data there. Stop it with `npm run cassandra -- stop` in the checkout ' +
          'that started it, then start again; or point CASSANDRA_CONTACT_POINTS at a real cluster.',
      );
    }
    opts.log(`reusing the node already answering on ${opts.host}:${opts.port}`);
    return { host: opts.host, port: opts.port, started: false };
  }
  // A node we started earlier may still be booting: wait for it instead of starting a second one.
  const existing = readPid(opts);
  if (existing && isAlive(existing)) {
    opts.log(`node pid ${existing} is starting; waiting for CQL on ${opts.host}:${opts.port}`);
    await waitForCql(opts, existing);
    return { host: opts.host, port: opts.port, started: false, pid: existing };
  }

  checkJava();
  const libDir = fetchJars(opts);
  const jars = readdirSync(libDir).filter((f) => f.endsWith('.jar'));
  const jamm = jars.find((f) => f.startsWith('jamm-'));
  if (!jamm) throw new LocalNodeError(`jamm jar missing from ${libDir}; delete ${opts.cacheDir} and retry`);

  if (opts.ephemeral) rmSync(opts.dataDir, { recursive: true, force: true });
  for (const sub of ['data', 'commitlog', 'saved_caches', 'hints', 'cdc_raw', 'logs']) {
    mkdirSync(join(opts.dataDir, sub), { recursive: true });
  }
  const confDir = join(opts.dataDir, 'conf');
  mkdirSync(confDir, { recursive: true });
  const yamlPath = join(confDir, 'cassandra.yaml');
  const logbackPath = join(confDir, 'logback.xml');
  writeFileSync(yamlPath, cassandraYaml(opts));
  writeFileSync(logbackPath, LOGBACK);

  const args = [
    `-Xms${opts.ephemeral ? '256M' : opts.heap}`,
    `-Xmx${opts.heap}`,
    '-XX:+UseG1GC',
    '-Xss512k',
    '-Djdk.attach.allowAttachSelf=true',
    `-javaagent:${join(libDir, jamm)}`,
    `-Dcassandra.config=file://${yamlPath}`,
    `-Dlogback.configurationFile=${logbackPath}`,
    `-Dcassandra.logdir=${join(opts.dataDir, 'logs')}`,
    `-Dcassandra.storagedir=${opts.dataDir}`,
    '-Dcassandra-foreground=yes',
    '-Dcassandra.skip_wait_for_gossip_to_settle=0',
    // A fresh single node otherwise sleeps 30 s of ring delay before it serves. A cluster member keeps a few
    // seconds: on every start it first asks its seeds and known peers for the ring (a shadow round), and gives up
    // with "Unable to gossip with any peers" when none answered within one ring delay, which 100 ms on a busy
    // 2-core machine was not.
    `-Dcassandra.ring_delay_ms=${opts.clusterMember ? 5000 : 100}`,
    '-XX:+ExitOnOutOfMemoryError',
    `-Dcassandra.jmx.local.port=${opts.jmxPort}`,
    ...(opts.ephemeral ? ['-Dcassandra.unsafesystem=true'] : []),
    ...JAVA17_MODULE_FLAGS,
    '-cp',
    jars.map((j) => join(libDir, j)).join(':'),
    'org.apache.cassandra.service.CassandraDaemon',
  ];
  const logPath = join(opts.dataDir, 'logs', 'node.log');
  const out = openSync(logPath, 'a');
  const child = spawn('java', args, { detached: true, stdio: ['ignore', out, out] });
  child.unref();
  if (!child.pid) throw new LocalNodeError('failed to spawn java');
  writeFileSync(pidFile(opts), String(child.pid));
  opts.log(`started Cassandra ${CASSANDRA_VERSION} pid ${child.pid}${opts.ephemeral ? ' (ephemeral)' : ''}; log: ${logPath}`);
  const started = Date.now();
  await waitForCql(opts, child.pid);
  opts.log(`CQL answers on ${opts.host}:${opts.port} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { host: opts.host, port: opts.port, started: true, pid: child.pid };
}

async function waitForCql(opts: LocalNodeOptions, pid: number): Promise<void> {
  const deadline = Date.now() + opts.startTimeoutMs;
  while (Date.now() < deadline) {
    if (await cqlAnswers(opts.host, opts.port)) return;
    if (!isAlive(pid)) {
      const log = join(opts.dataDir, 'logs', 'node.log');
      const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-30).join('\n') : '';
      throw new LocalNodeError(`the Cassandra node (pid ${pid}) exited before answering CQL. Last log lines:\n${tail}`);
    }
    await delay(250);
  }
  throw new LocalNodeError(`the Cassandra node did not answer CQL on ${opts.host}:${opts.port} within ${opts.startTimeoutMs} ms`);
}

/** Stops the node this script started (by its recorded pid) and nothing else. */
export async function stopLocalNode(opts: LocalNodeOptions = defaultLocalNodeOptions()): Promise<boolean> {
  const pid = readPid(opts);
  if (!pid || !isAlive(pid)) {
    opts.log('no node started by this project is running');
    rmSync(pidFile(opts), { force: true });
    return false;
  }
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 60_000;
  while (isAlive(pid) && Date.now() < deadline) await delay(200);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(pidFile(opts), { force: true });
  opts.log(`stopped node pid ${pid}`);
  return true;
}

/**
 * A node for work whose data does not matter (tests, benchmarks): the node
 * already answering on 9042 if there is one (such work keeps to its own
 * keyspace), otherwise the throwaway node, started if needed.
 */
export async function nodeForThrowawayWork(log?: (line: string) => void): Promise<{ host: string; port: number }> {
  if (await cqlAnswers('127.0.0.1', 9042)) return { host: '127.0.0.1', port: 9042 };
  const node = await ensureLocalNode(defaultLocalNodeOptions({ ephemeral: true, ...(log ? { log } : {}) }));
  return { host: node.host, port: node.port };
}

