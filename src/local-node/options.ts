/** What the local node launcher is told: its version, ports, folders and heap. */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

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
  /** A node of the local cluster (src/local-node/cluster.ts): its cluster's name, seeds and one token of its own. */
  clusterMember?: { clusterName: string; seeds: string; initialToken: string };
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
