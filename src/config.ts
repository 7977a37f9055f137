/**
 * Every setting the server reads, in one typed place. docs/configuration.md's
 * configuration table mirrors this file.
 */
import { Limits } from './limits.js';
import { availableParallelism } from 'node:os';
import { between, bool, int, list, oneOf, positive, type Env } from './env-readers.js';

/** A setting the server cannot start with: its message names the setting and what to set (main prints it in one line). */
export class SettingError extends Error {
  override name = 'SettingError';
}

export interface CassandraConfig {
  /** Empty: start or reuse the local node (see src/local-node/launcher.ts). */
  contactPoints: string[];
  localDataCenter: string;
  keyspace: string;
  username?: string;
  password?: string;
  /** e.g. { dc1: 3, dc2: 3 } for NetworkTopologyStrategy; empty means SimpleStrategy with factor 1 (local node). */
  replication: Record<string, number>;
  consistency: 'LOCAL_QUORUM' | 'QUORUM' | 'LOCAL_ONE' | 'ONE' | 'ALL' | 'EACH_QUORUM';
  serialConsistency: 'LOCAL_SERIAL' | 'SERIAL';
  /** Apply cql/ migrations at start. */
  migrate: boolean;
  requestTimeoutMs: number;
  /**
   * How long a start keeps trying while Cassandra cannot serve (no node answers, gossip not settled, too few
   * replicas up): see src/db/cassandra/startup-wait.ts. Past it, the start fails.
   */
  startupTimeoutMs: number;
  /**
   * A read (an idempotent SELECT) not answered after this many ms is sent to a second node as well, and the first
   * answer wins: a node that stalls (a GC pause, a saturated disk) costs a read this much, not a whole timeout.
   * 0 turns it off.
   */
  speculativeReadDelayMs: number;
  /**
   * The same for an idempotent write (not a batch), which costs its replicas more when run twice: a write waits
   * for a quorum of replicas, so only a stalled coordinator holds it up, and then for the whole request timeout.
   * 0 turns it off.
   */
  speculativeWriteDelayMs: number;
  /**
   * A logged batch that a second run writes the same, not answered after this many ms, runs unlogged as well, the
   * first success answering: its batchlog waits for two other nodes, so one stalled node holds every logged batch
   * for the server's write timeout (src/db/cassandra/client.ts, loggedWithFallback).
   */
  batchlogPatienceMs: number;
  /**
   * A lightweight transaction whose coordinator has answered nothing at all (no request of this instance) for this
   * many ms is given up as of unknown outcome, and read back at SERIAL through the other replicas: a stalled
   * coordinator holds it no longer than this, not the whole request timeout. Keep it above the cluster's
   * cas_contention_timeout, so that the stalled coordinator, once it resumes, is past its own deadline for it and
   * cannot still apply it. 0 turns it off.
   */
  lwtPatienceMs: number;
}

export interface AuthConfig {
  /** HS256 secret (at least 32 bytes). */
  jwtSecret?: string;
  /** PEM key pair for EdDSA; wins over jwtSecret when both are set. */
  jwtPrivateKey?: string;
  jwtPublicKey?: string;
  /** Where a generated development secret is kept so restarts keep sessions. */
  devSecretFile: string;
  issuer: string;
  audience: string;
  tokenTtlSeconds: number;
  /**
   * scrypt cost: N=2^14, r=8, p=5 by default, one of the settings OWASP's
   * password storage cheat sheet lists as equal in strength to N=2^17, r=8,
   * p=1. It needs 16 MiB a hash instead of 128, hashes in about a third of
   * the time, and slows the requests beside it less (bench/results/login.md).
   * Changing it: see SCRYPT_N in docs/configuration.md.
   */
  scryptN: number;
  scryptR: number;
  scryptP: number;
  /**
   * Password hashes (logins, sign-ups) computed at once by this process, and
   * how many more may wait for one. Each is ~0.1–0.3 s of a core and 16 MiB:
   * unbounded, a burst of logins takes every core from every other request.
   */
  passwordHashConcurrency: number;
  passwordHashQueue: number;
  /** How long a hash may wait for a slot before it is refused, as one past the queue is. */
  passwordHashMaxWaitMs: number;
  /**
   * Niceness (0-19) the threads that hash add to the server's own: a hash
   * takes the CPU the server's requests leave, so logins slow down under load
   * rather than every other request (Linux; elsewhere they hash at the
   * process's priority).
   */
  passwordHashNice: number;
  /** Failed logins allowed per login and per address inside the window. */
  loginFailuresPerLogin: number;
  loginFailuresPerAddress: number;
  loginFailureWindowSeconds: number;
  /** Accounts one client address may create per hour (each costs a scrypt hash). */
  registrationsPerAddressPerHour: number;
}

export interface LimitsConfig {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxDirectives: number;
  maxCost: number;
}

export interface MarketplaceConfig {
  /** How often each instance completes purchases that were bound but not completed (a crash between the two). */
  recoveryIntervalMs: number;
  /**
   * Recovery leaves purchases younger than this to the request that made them:
   * a request still in flight completes its own purchase, and recovery spends
   * no SERIAL read on it.
   */
  recoveryGraceMs: number;
  /** Attempts at binding a purchase to its item (the LWT) before giving up with CONFLICT. */
  bindAttempts: number;
}

export interface RoomsConfig {
  /** Messages one user may post (in all rooms, on all instances) per window, before RATE_LIMITED. */
  postsPerWindow: number;
  postWindowSeconds: number;
  /** How long a presence entry lives without a heartbeat: a user of a crashed instance goes offline within about 4/3 of it. */
  presenceTtlMs: number;
  /**
   * How often each instance finishes the cleanups of deleted rooms whose deleting request died midway, and the
   * joins, leaves and removals whose system message a request left unwritten (resolvers/rooms/room-notices.ts).
   */
  cleanupRecoveryIntervalMs: number;
  /** The job leaves a deletion younger than this to the request that made it, which is most likely still cleaning up. */
  cleanupRecoveryGraceMs: number;
  /** ReactionChanged events of one message are coalesced into one per this window, per instance. */
  reactionEventWindowMs: number;
  /** Files one user may upload per UTC day (ATTACHMENT_UPLOADS_PER_DAY), before LIMIT_REACHED. */
  uploadsPerDay: number;
  /**
   * An upload's body must bring at least uploadMinBytesPerSecond (UPLOAD_MIN_BYTES_PER_SECOND) in each window of
   * uploadRateWindowMs (UPLOAD_RATE_WINDOW_MS), or it is answered REQUEST_TIMEOUT and its connection closed.
   */
  uploadMinBytesPerSecond: number;
  uploadRateWindowMs: number;
}

export interface TrustedDocumentsConfig {
  /** `only`: refuse any document that is not in a manifest; `any`: run documents sent as text too. */
  mode: 'only' | 'any';
  /** Manifest files, each a JSON object of id → document (the client preset's persisted-documents.json). */
  files: string[];
}

/**
 * OpenTelemetry traces, set through the standard OTEL_* variables. The SDK
 * and the OTLP exporter read their own further variables (sampler, batching,
 * endpoint details, headers): see docs/operations.md.
 */
export interface TracingConfig {
  /** Where spans go; empty means tracing is off. */
  exporters: Array<'otlp' | 'console'>;
  /** The OTLP/HTTP traces URL when an endpoint is set; unset, the exporter's default (localhost:4318). */
  otlpTracesUrl?: string;
  /** The service.name resource attribute. */
  serviceName: string;
}

export interface MetricsConfig {
  /** Serve Prometheus metrics at /metrics; default on outside production. */
  enabled: boolean;
  /** When set, /metrics answers only requests bearing `Authorization: Bearer <token>`. */
  token?: string;
}

export interface Config {
  port: number;
  host: string;
  production: boolean;
  /** GraphiQL and introspection; default on outside production. */
  exposeSchema: boolean;
  logLevel: string;
  /**
   * Worker processes sharing the port (node:cluster), one per core on a
   * multi-core machine. Above 1 only with REDIS_URL: events, rate limits and
   * revocations must cross processes, as they cross instances.
   */
  webConcurrency: number;
  redisUrl?: string;
  /**
   * A Redis Cluster's nodes (host:port,...), any of them: events go through sharded pub/sub, and rate limits and
   * presence through the cluster. Takes the place of REDIS_URL.
   */
  redisClusterNodes?: string;
  /** Prefix of every Redis key and channel. */
  redisPrefix: string;
  cassandra: CassandraConfig;
  auth: AuthConfig;
  limits: LimitsConfig;
  marketplace: MarketplaceConfig;
  rooms: RoomsConfig;
  tracing: TracingConfig;
  metrics: MetricsConfig;
  /** Trust X-Forwarded-For for the client address (behind a proxy). */
  trustProxy: boolean;
  /**
   * How long an idle kept-alive HTTP connection is held open. Behind a load balancer it must be longer than the
   * balancer's own idle timeout (60 s on AWS ALB), or the balancer sends on connections the server is closing.
   */
  httpKeepAliveTimeoutMs: number;
  /** Origins allowed to call from a browser page elsewhere ('any' in development by default). */
  corsOrigins: string[] | 'any';
  trustedDocuments: TrustedDocumentsConfig;
  /** Unsent bytes one WebSocket may hold before it is closed as too slow (4413). */
  wsMaxBufferedBytes: number;
  /** Live connections (WebSockets and SSE streams) one client address may hold on one instance; more are refused with 429. */
  maxLiveConnectionsPerAddress: number;
  /** Run queries and mutations as code compiled by graphql-jit (subscriptions never are). */
  graphqlJit: boolean;
  /** Serve ordinary JSON queries and mutations without Yoga's fetch-API layer (src/server/http/json-fast-path.ts). */
  httpFastPath: boolean;
}

/**
 * Default of PURCHASE_RECOVERY_GRACE_MS. A request binds and completes its
 * purchase within seconds, so two minutes leaves it ample time first; recovery
 * reaching one that is slower still is harmless (completion is idempotent).
 */
export const DEFAULT_RECOVERY_GRACE_MS = 2 * 60_000;

/** PURCHASE_BIND_ATTEMPTS when unset: lost races for an item's stock a purchase retries before CONFLICT. */
export const DEFAULT_BIND_ATTEMPTS = 50;

/** "dc1:3,dc2:3" → { dc1: 3, dc2: 3 } */
export function parseReplication(raw: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of list(raw)) {
    const [dc, factor] = part.split(':');
    const n = Number(factor);
    if (!dc || !Number.isInteger(n) || n < 1) throw new Error(`CASSANDRA_REPLICATION: bad entry "${part}" (want dc:factor)`);
    out[dc] = n;
  }
  return out;
}

/** CORS_ORIGINS: "*" for any, or a list of origins such as "https://app.example.com,http://localhost:5173". */
export function parseCorsOrigins(raw: string | undefined, production: boolean): string[] | 'any' {
  if (raw === undefined || raw.trim() === '') return production ? [] : 'any';
  if (raw.trim() === '*') return 'any';
  return list(raw).map((entry) => {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`CORS_ORIGINS: "${entry}" is not an origin (want scheme://host[:port])`);
    }
    if (url.origin !== entry.replace(/\/$/, '')) throw new Error(`CORS_ORIGINS: "${entry}" is not an origin (want scheme://host[:port])`);
    return url.origin;
  });
}

/**
 * Tracing is opt-in: on when OTEL_TRACES_EXPORTER names an exporter, or when
 * an OTLP endpoint is set (then the exporter is otlp, the specification's
 * default). OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true keeps it off.
 */
function tracingConfig(env: Env): TracingConfig {
  const serviceName = env.OTEL_SERVICE_NAME || 'parley';
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return { exporters: [], serviceName };
  const named = list(env.OTEL_TRACES_EXPORTER).map((name) => name.toLowerCase());
  for (const name of named) {
    if (!['otlp', 'console', 'none'].includes(name)) throw new Error(`OTEL_TRACES_EXPORTER: unsupported exporter "${name}" (otlp, console or none)`);
  }
  // The specification's rule: the traces endpoint is used as is, the general one gets the traces path.
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const otlpTracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (base ? `${base.replace(/\/$/, '')}/v1/traces` : undefined);
  const exporters = (named.length > 0 ? named.filter((name) => name !== 'none') : otlpTracesUrl ? ['otlp'] : []) as TracingConfig['exporters'];
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL;
  // The exporter speaks OTLP over HTTP only: spans sent to a gRPC port would be lost without a word.
  if (exporters.includes('otlp') && protocol === 'grpc') {
    throw new Error('OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: send OTLP over HTTP (the collector listens on 4318)');
  }
  return { exporters: [...new Set(exporters)], serviceName, otlpTracesUrl };
}

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production';
  const webConcurrency = int(env, 'WEB_CONCURRENCY', 1);
  if (webConcurrency < 1 || webConcurrency > 64) throw new Error(`WEB_CONCURRENCY must be between 1 and 64, got ${webConcurrency}`);
  if (webConcurrency > 1 && !env.REDIS_URL && !env.REDIS_CLUSTER_NODES) {
    throw new Error('WEB_CONCURRENCY above 1 needs REDIS_URL or REDIS_CLUSTER_NODES: live events, rate limits and revocations must reach every worker');
  }
  return {
    webConcurrency,
    port: int(env, 'PORT', 4000),
    host: env.HOST ?? '0.0.0.0',
    production,
    exposeSchema: bool(env, 'EXPOSE_SCHEMA', !production),
    logLevel: env.LOG_LEVEL ?? (env.NODE_ENV === 'test' ? 'warn' : 'info'),
    redisUrl: env.REDIS_URL || undefined,
    redisClusterNodes: env.REDIS_CLUSTER_NODES || undefined,
    redisPrefix: env.REDIS_PREFIX ?? 'parley:',
    trustProxy: bool(env, 'TRUST_PROXY', false),
    httpKeepAliveTimeoutMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000),
    corsOrigins: parseCorsOrigins(env.CORS_ORIGINS, production),
    wsMaxBufferedBytes: int(env, 'WS_MAX_BUFFERED_BYTES', 4 * 1024 * 1024),
    maxLiveConnectionsPerAddress: positive(env, 'MAX_LIVE_CONNECTIONS_PER_ADDRESS', 256),
    graphqlJit: bool(env, 'GRAPHQL_JIT', true),
    httpFastPath: bool(env, 'HTTP_FAST_PATH', true),
    trustedDocuments: {
      mode: oneOf(env, 'TRUSTED_DOCUMENTS', ['any', 'only'] as const, 'any'),
      files: list(env.TRUSTED_DOCUMENTS_FILE),
    },
    cassandra: {
      contactPoints: list(env.CASSANDRA_CONTACT_POINTS),
      localDataCenter: env.CASSANDRA_LOCAL_DC ?? 'datacenter1',
      keyspace: env.CASSANDRA_KEYSPACE ?? 'parley',
      username: env.CASSANDRA_USERNAME || undefined,
      password: env.CASSANDRA_PASSWORD || undefined,
      replication: parseReplication(env.CASSANDRA_REPLICATION),
      consistency: (env.CASSANDRA_CONSISTENCY as CassandraConfig['consistency']) ?? 'LOCAL_QUORUM',
      serialConsistency: (env.CASSANDRA_SERIAL_CONSISTENCY as CassandraConfig['serialConsistency']) ?? 'LOCAL_SERIAL',
      migrate: bool(env, 'CASSANDRA_MIGRATE', true),
      requestTimeoutMs: int(env, 'CASSANDRA_REQUEST_TIMEOUT_MS', 12_000),
      startupTimeoutMs: int(env, 'CASSANDRA_STARTUP_TIMEOUT_MS', 120_000),
      speculativeReadDelayMs: int(env, 'CASSANDRA_SPECULATIVE_READ_DELAY_MS', 250),
      speculativeWriteDelayMs: int(env, 'CASSANDRA_SPECULATIVE_WRITE_DELAY_MS', 500),
      batchlogPatienceMs: int(env, 'CASSANDRA_BATCHLOG_PATIENCE_MS', 1000),
      lwtPatienceMs: int(env, 'CASSANDRA_LWT_PATIENCE_MS', 6000),
    },
    auth: {
      jwtSecret: env.JWT_SECRET || undefined,
      jwtPrivateKey: env.JWT_PRIVATE_KEY || undefined,
      jwtPublicKey: env.JWT_PUBLIC_KEY || undefined,
      devSecretFile: env.JWT_DEV_SECRET_FILE ?? '.parley/jwt-secret',
      issuer: env.JWT_ISSUER ?? 'parley',
      audience: env.JWT_AUDIENCE ?? 'parley-api',
      tokenTtlSeconds: int(env, 'JWT_TTL_SECONDS', 24 * 3600),
      scryptN: int(env, 'SCRYPT_N', 2 ** 14),
      scryptR: int(env, 'SCRYPT_R', 8),
      scryptP: int(env, 'SCRYPT_P', 5),
      passwordHashConcurrency: positive(env, 'PASSWORD_HASH_CONCURRENCY', Math.max(1, Math.floor(availableParallelism() / 2))),
      passwordHashQueue: int(env, 'PASSWORD_HASH_QUEUE', 32),
      // At most what a timer takes: Node runs a longer one after 1 ms.
      passwordHashMaxWaitMs: between(env, 'PASSWORD_HASH_MAX_WAIT_MS', 10_000, 1, 2 ** 31 - 1),
      passwordHashNice: between(env, 'PASSWORD_HASH_NICE', 10, 0, 19),
      loginFailuresPerLogin: int(env, 'LOGIN_FAILURES_PER_LOGIN', 5),
      loginFailuresPerAddress: int(env, 'LOGIN_FAILURES_PER_ADDRESS', 20),
      loginFailureWindowSeconds: int(env, 'LOGIN_FAILURE_WINDOW_SECONDS', 300),
      registrationsPerAddressPerHour: int(env, 'REGISTRATIONS_PER_ADDRESS_PER_HOUR', 20),
    },
    limits: {
      maxDepth: int(env, 'MAX_DEPTH', 10),
      maxAliases: int(env, 'MAX_ALIASES', 15),
      maxTokens: int(env, 'MAX_TOKENS', 2000),
      maxDirectives: int(env, 'MAX_DIRECTIVES', 20),
      maxCost: int(env, 'MAX_COST', 5000),
    },
    marketplace: {
      recoveryIntervalMs: int(env, 'PURCHASE_RECOVERY_INTERVAL_MS', 60_000),
      recoveryGraceMs: int(env, 'PURCHASE_RECOVERY_GRACE_MS', DEFAULT_RECOVERY_GRACE_MS),
      bindAttempts: int(env, 'PURCHASE_BIND_ATTEMPTS', DEFAULT_BIND_ATTEMPTS),
    },
    rooms: {
      postsPerWindow: positive(env, 'ROOM_POSTS_PER_WINDOW', 20),
      postWindowSeconds: positive(env, 'ROOM_POST_WINDOW_SECONDS', 10),
      presenceTtlMs: positive(env, 'PRESENCE_TTL_SECONDS', 30) * 1000,
      cleanupRecoveryIntervalMs: positive(env, 'ROOM_CLEANUP_INTERVAL_MS', 60_000),
      cleanupRecoveryGraceMs: int(env, 'ROOM_CLEANUP_GRACE_MS', 120_000),
      reactionEventWindowMs: between(env, 'REACTION_EVENT_WINDOW_MS', 250, 1, 60_000),
      uploadsPerDay: positive(env, 'ATTACHMENT_UPLOADS_PER_DAY', Limits.attachments.uploadsPerDay),
      uploadMinBytesPerSecond: positive(env, 'UPLOAD_MIN_BYTES_PER_SECOND', Limits.uploads.minBytesPerSecond),
      uploadRateWindowMs: between(env, 'UPLOAD_RATE_WINDOW_MS', Limits.uploads.rateWindowMs, 100, 300_000),
    },
    tracing: tracingConfig(env),
    metrics: metricsConfig(env, production),
  };
}

/**
 * Metrics list every operation name, error rates and the database's health:
 * reconnaissance for an attacker. In production they are off unless asked for,
 * and once asked for they must be protected by a token (refusing to start
 * beats serving them to the internet by an oversight).
 */
function metricsConfig(env: Env, production: boolean): MetricsConfig {
  const enabled = bool(env, 'METRICS', !production);
  const token = env.METRICS_TOKEN || undefined;
  if (production && enabled && !token) {
    throw new Error('METRICS=on in production requires METRICS_TOKEN (scrapers then send Authorization: Bearer <token>)');
  }
  return { enabled, token };
}
