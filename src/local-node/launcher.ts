/**
 * Starts (or reuses) one real Apache Cassandra node on loopback, assembled from
 * Maven Central: Maven Central carries `cassandra-all` and its runtime jars but
 * no binary tarball, so we build the classpath ourselves and start
 * CassandraDaemon under the installed Java 17.
 *
 * The jars and generated config live in a cache folder outside the work tree;
 * the node's data lives in a (git-ignored) data folder of the project.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import cassandra from 'cassandra-driver';

export const CASSANDRA_VERSION = '5.0.9';

/** Ports of the throwaway test node. */
export const EPHEMERAL_PORTS = { cql: 9043, storage: 7002, jmx: 7299 } as const;

export interface LocalNodeOptions {
  /** Where the jars and generated config live; shared by every checkout. */
  cacheDir: string;
  /** Where data, commit log and the pid file live. */
  dataDir: string;
  host: string;
  port: number;
  storagePort: number;
  jmxPort: number;
  /** JVM heap, e.g. "1G". */
  heap: string;
  /**
   * A throwaway node for tests: its data folder is wiped at each start and it
   * runs with -Dcassandra.unsafesystem=true (3x faster DDL, but a kill -9
   * loses everything, so never for a node that keeps data).
   */
  ephemeral: boolean;
  startTimeoutMs: number;
  log: (line: string) => void;
}

export function defaultLocalNodeOptions(overrides: Partial<LocalNodeOptions> = {}): LocalNodeOptions {
  const ephemeral = overrides.ephemeral ?? process.env.CASSANDRA_EPHEMERAL === '1';
  return {
    cacheDir: process.env.CASSANDRA_CACHE_DIR ?? join(homedir(), '.cache', 'parley', `cassandra-${CASSANDRA_VERSION}`),
    dataDir: resolve(process.env.CASSANDRA_DATA_DIR ?? (ephemeral ? '.cassandra/ephemeral' : '.cassandra/data')),
    host: '127.0.0.1',
    // The throwaway node has ports of its own, so it can run beside a kept-data node on 9042
    // (`npm test` leaves it running; a later `npm start` must still work).
    port: ephemeral ? EPHEMERAL_PORTS.cql : Number(process.env.CASSANDRA_PORT ?? 9042),
    storagePort: ephemeral ? EPHEMERAL_PORTS.storage : 7000,
    jmxPort: ephemeral ? EPHEMERAL_PORTS.jmx : 7199,
    heap: process.env.CASSANDRA_HEAP ?? '1G',
    ephemeral,
    startTimeoutMs: 180_000,
    log: (line) => process.stderr.write(`[cassandra] ${line}\n`),
    ...overrides,
  };
}

export class LocalNodeError extends Error {}

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

function requireTool(cmd: string, args: string[], what: string): string {
  const out = spawnSync(cmd, args, { encoding: 'utf8' });
  if (out.error || out.status !== 0) {
    throw new LocalNodeError(
      `${what} is required to run the local Cassandra node but \`${cmd}\` was not found or failed. ` +
        `Install it (Debian: apt-get install ${cmd === 'java' ? 'openjdk-17-jre-headless' : 'maven'}), ` +
        'or point the server at a cluster with CASSANDRA_CONTACT_POINTS.',
    );
  }
  return `${out.stdout}${out.stderr}`;
}

function checkJava(): void {
  const version = requireTool('java', ['-version'], 'Java 17 or newer');
  const match = /version "(\d+)(?:\.(\d+))?/.exec(version);
  const major = match ? Number(match[1] === '1' ? match[2] : match[1]) : 0;
  if (major < 17) {
    throw new LocalNodeError(`Java 17 or newer is required for Cassandra ${CASSANDRA_VERSION}; found: ${version.split('\n')[0]}`);
  }
}

const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>parley.local</groupId>
  <artifactId>cassandra-node</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>${CASSANDRA_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;

/** Fetches cassandra-all and its runtime jars once; later calls are no-ops. */
export function fetchJars(opts: LocalNodeOptions): string {
  const libDir = join(opts.cacheDir, 'lib');
  const marker = join(opts.cacheDir, 'jars.complete');
  if (existsSync(marker)) return libDir;
  requireTool('mvn', ['-v'], 'Apache Maven');
  mkdirSync(opts.cacheDir, { recursive: true });
  writeFileSync(join(opts.cacheDir, 'pom.xml'), POM);
  opts.log(`fetching cassandra-all ${CASSANDRA_VERSION} and its runtime jars into ${libDir}`);
  const out = spawnSync(
    'mvn',
    ['-B', '-q', 'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${libDir}`],
    { cwd: opts.cacheDir, stdio: 'inherit' },
  );
  if (out.status !== 0) throw new LocalNodeError(`mvn failed to fetch the Cassandra jars (exit ${out.status})`);
  writeFileSync(marker, new Date().toISOString());
  return libDir;
}

/** A throwaway node names itself so a kept-data server never mistakes it for a real one. */
const CLUSTER_NAME = { kept: 'parley-local', ephemeral: 'parley-ephemeral' } as const;

function cassandraYaml(opts: LocalNodeOptions): string {
  const d = opts.dataDir;
  return `cluster_name: ${opts.ephemeral ? CLUSTER_NAME.ephemeral : CLUSTER_NAME.kept}
num_tokens: 16
allocate_tokens_for_local_replication_factor: 1
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
commitlog_sync: periodic
commitlog_sync_period: 10000ms
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "${opts.host}:${opts.storagePort}"
listen_address: ${opts.host}
rpc_address: ${opts.host}
storage_port: ${opts.storagePort}
native_transport_port: ${opts.port}
endpoint_snitch: SimpleSnitch
data_file_directories:
  - ${d}/data
commitlog_directory: ${d}/commitlog
saved_caches_directory: ${d}/saved_caches
hints_directory: ${d}/hints
cdc_raw_directory: ${d}/cdc_raw
auto_snapshot: false
# Measured: paxos v2 halves the wall time of 200 concurrent LWTs on one key.
paxos_variant: v2
# A laptop or CI box with 2 cores is slow under bursts of LWTs; give them room.
cas_contention_timeout: 5000ms
write_request_timeout: 5000ms
read_request_timeout: 5000ms
range_request_timeout: 10000ms
truncate_request_timeout: 60000ms
`;
}

const LOGBACK = `<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDOUT"/></root>
  <logger name="org.apache.cassandra.service.CassandraDaemon" level="INFO"/>
  <logger name="org.apache.cassandra.transport.Server" level="INFO"/>
</configuration>
`;

// From Cassandra's conf/jvm17-server.options.
const JAVA17_MODULE_FLAGS = [
  ...[
    'java.base/jdk.internal.misc',
    'java.base/jdk.internal.ref',
    'java.base/sun.nio.ch',
    'java.management.rmi/com.sun.jmx.remote.internal.rmi',
    'java.rmi/sun.rmi.registry',
    'java.rmi/sun.rmi.server',
    'java.sql/java.sql',
  ].map((m) => `--add-exports=${m}=ALL-UNNAMED`),
  ...[
    'java.base/java.lang.module',
    'java.base/jdk.internal.loader',
    'java.base/jdk.internal.ref',
    'java.base/jdk.internal.reflect',
    'java.base/jdk.internal.math',
    'java.base/jdk.internal.module',
    'java.base/jdk.internal.util.jar',
    'java.base/sun.nio.ch',
    'java.base/java.io',
    'java.base/java.nio',
    'java.base/java.util.concurrent',
    'java.base/java.util',
    'java.base/java.util.concurrent.atomic',
    'java.base/java.lang',
    'java.base/java.math',
    'java.base/java.lang.reflect',
    'java.base/java.net',
    'jdk.management/com.sun.management.internal',
  ].map((m) => `--add-opens=${m}=ALL-UNNAMED`),
];

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
    // A fresh single node otherwise sleeps 30 s of ring delay before it serves.
    '-Dcassandra.ring_delay_ms=100',
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
