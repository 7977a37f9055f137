/**
 * The Cassandra client and the rules every query follows: prepared, at the
 * configured consistency, marked idempotent when it is safe to repeat, and, for
 * lightweight transactions, never retried blindly after an unknown outcome.
 */
import { setTimeout as delay } from 'node:timers/promises';
import cassandra from 'cassandra-driver';
import type { Logger } from 'pino';
import type { CassandraConfig } from '../../config.js';
import { coordinatorOf, LWT_PROFILE, NodeHealth, primaryFirstBalancing, RetryPolicy, SpeculativeExecutions, stallAwareBalancing } from './policies.js';

const { Client, types, errors, policies } = cassandra;
export type Row = cassandra.types.Row;
export type ResultSet = cassandra.types.ResultSet;
export const { TimeUuid, Uuid, BigDecimal, Long } = types;
export type TimeUuid = cassandra.types.TimeUuid;
export type BigDecimal = cassandra.types.BigDecimal;

/**
 * A map column's value as a Map (empty for null). The driver decodes maps as plain objects here: decoded as Maps
 * (its `encoding.map` option), the schema it reads is too, and it then cannot see a keyspace's replication.
 */
export function mapOf<V>(value: unknown): Map<string, V> {
  return new Map(Object.entries((value ?? {}) as Record<string, V>));
}

/** A bigint column's value (the driver's Long: two signed 32-bit halves) as a bigint, without its decimal text. */
export function bigIntOf(value: { high: number; low: number }): bigint {
  return (BigInt(value.high) << 32n) | BigInt(value.low >>> 0);
}

/**
 * One CQL query. Define each once (as a module-level constant in a store) and
 * the driver prepares it once per connection pool.
 */
export interface Statement {
  readonly cql: string;
  /** Safe to run twice with the same values: the driver may then retry it on another node or after a timeout. */
  readonly idempotent: boolean;
  /**
   * The positions of the parameters bound to a list column (not frozen): each run gives the list's elements new
   * cell keys, so a second run at the same write timestamp repeats them, and Database.batch never runs such a
   * batch twice itself. Only the list positions count: a set or a frozen value bound from an array writes the same
   * cells at each run, and counting it would take a post's speculative and unlogged retries away for nothing.
   */
  readonly writesList?: readonly number[];
}

export const cql = (query: string, opts: { idempotent: boolean; writesList?: readonly number[] }): Statement => ({
  cql: query,
  idempotent: opts.idempotent,
  ...(opts.writesList ? { writesList: opts.writesList } : {}),
});

/** Whether running `stmt` with `params` twice writes what once does (Statement.idempotent, and no list element bound). */
function runsTwiceTheSame(stmt: Statement, params: readonly unknown[]): boolean {
  if (!stmt.idempotent) return false;
  return !(stmt.writesList ?? []).some((at) => {
    const bound = params[at];
    return Array.isArray(bound) && bound.length > 0;
  });
}

export interface LwtOutcome {
  applied: boolean;
  /** The row returned by Cassandra (current values when not applied); absent when a SERIAL read found none. */
  row?: Row;
  /**
   * From a read back only: not applied, and its condition is false on the row read at SERIAL in a way that nothing
   * can undo (a version moved past the one it expects): run again, it could not apply, so this is its answer.
   */
  settled?: boolean;
}

/**
 * Wraps each request sent to Cassandra: one statement's CQL, or a batch's
 * (an array). How tracing sees storage without src/db knowing about it.
 */
export type AroundRequest = <T>(cql: string | readonly string[], send: () => Promise<T>) => Promise<T>;

export interface ExecuteOptions {
  fetchSize?: number;
  pageState?: string;
  consistency?: number;
  readTimeout?: number;
  /** LWT_PROFILE for a SERIAL read: routed as the partition's LWTs are. */
  executionProfile?: string;
}

export class Database {
  readonly client: cassandra.Client;
  private readonly consistency: number;
  readonly serialConsistency: number;
  /**
   * Requests sent to Cassandra by this instance (queries, batches, LWTs). A
   * benchmark or test reads it before and after one operation to show what
   * the operation costs.
   */
  queryCount = 0;
  /** Which nodes answer: the driver's request tracker, passing each outcome on to the instance's metrics. */
  private readonly health: NodeHealth;
  /** Probes the nodes seen not to answer (probeSilentNodes), and the nodes a probe is out to. */
  private readonly prober: NodeJS.Timeout;
  private readonly probing = new Set<cassandra.Host>();

  constructor(
    readonly config: CassandraConfig,
    private readonly logger: Logger,
    contactPoints: string[],
    private readonly aroundRequest: AroundRequest = (_cql, send) => send(),
    /** Told of every request the driver sends, with its latency and outcome (the instance's metrics). */
    requestTracker?: cassandra.tracker.RequestTracker,
  ) {
    this.consistency = types.consistencies[toConsistencyKey(config.consistency)];
    this.serialConsistency = types.consistencies[toConsistencyKey(config.serialConsistency)];
    this.health = new NodeHealth(requestTracker);
    this.prober = setInterval(() => this.probeSilentNodes(), PROBE_EVERY_MS).unref();
    this.client = new Client(
      clientOptions(config, contactPoints, {
        keyspace: config.keyspace,
        // Maps stay plain objects (mapOf reads them): the driver decodes the schema it reads with these options too,
        // and with `map: Map` it finds no replication strategy in a keyspace's replication map. It then knows only
        // each partition's primary replica: every request went there first, and none went elsewhere when it stalled.
        encoding: { set: Set, useUndefinedAsUnset: true },
        socketOptions: { readTimeout: config.requestTimeoutMs, connectTimeout: 5000 },
        queryOptions: { consistency: this.consistency, serialConsistency: this.serialConsistency, prepare: true },
        // A statement is prepared on the node it first runs on, and on another node when it first runs there (the
        // driver re-prepares on its UNPREPARED answer). The default prepares on every node at once and waits for all:
        // a stalled node would hold up the first request of each statement for a whole timeout.
        prepareOnAllHosts: false,
        requestTracker: this.health,
        policies: { speculativeExecution: new SpeculativeExecutions(config.speculativeReadDelayMs, config.speculativeWriteDelayMs) },
      }),
    );
  }

  async connect(): Promise<void> {
    await this.client.connect();
  }

  async execute(stmt: Statement, params: unknown[] = [], opts: ExecuteOptions = {}): Promise<ResultSet> {
    this.queryCount += 1;
    return this.aroundRequest(stmt.cql, () =>
      this.client.execute(stmt.cql, params, {
        prepare: true,
        isIdempotent: runsTwiceTheSame(stmt, params),
        consistency: opts.consistency ?? this.consistency,
        fetchSize: opts.fetchSize,
        pageState: opts.pageState,
        readTimeout: opts.readTimeout,
        ...(opts.executionProfile ? { executionProfile: opts.executionProfile } : {}),
      }),
    );
  }

  /** Every row the query selects, `fetchSize` rows a request: a whole partition however large it has grown. */
  async allRows(stmt: Statement, params: unknown[], fetchSize: number): Promise<Row[]> {
    const rows: Row[] = [];
    let pageState: string | undefined;
    do {
      const rs = await this.execute(stmt, params, { fetchSize, pageState });
      rows.push(...rs.rows);
      pageState = rs.pageState ?? undefined;
    } while (pageState);
    return rows;
  }

  async first(stmt: Statement, params: unknown[] = []): Promise<Row | undefined> {
    return (await this.execute(stmt, params)).first() ?? undefined;
  }

  /** Reads at SERIAL consistency: sees the outcome of every LWT on the partition, finishing one in flight. */
  async readSerial(stmt: Statement, params: unknown[]): Promise<Row | undefined> {
    return (await this.execute(stmt, params, { consistency: this.serialConsistency, executionProfile: LWT_PROFILE })).first() ?? undefined;
  }

  /**
   * A logged batch: all of its statements apply or, after a timeout, eventually all do. A timeout once its
   * batchlog was written (writeType BATCH) is a success: the batchlog replays it.
   *
   * A logged batch first writes its batchlog to two other nodes. When one of them is down but not yet known to be
   * (a node killed, for the seconds before gossip convicts it), that write times out (writeType BATCH_LOG): the
   * batch has not run yet, and the batchlog node that did answer replays it later, with its write timestamp. A
   * batch whose second run writes exactly what its first did then runs again as an unlogged batch, with the
   * timestamp the logged one had, and does so as well once the logged one has waited batchlogPatienceMs (a stalled
   * node holds a batchlog write for the server's whole write timeout): it needs no batchlog, only a quorum of each
   * partition's replicas, and the replay that follows changes nothing (loggedWithFallback). A statement that is not idempotent, or that writes a list's elements
   * (Statement.writesList: they get new cell keys at each run, so a second run repeats them), keeps the batch to
   * its error.
   */
  async batch(queries: Array<{ stmt: Statement; params: unknown[] }>, opts: { logged?: boolean } = {}): Promise<void> {
    if (queries.length === 0) return;
    this.queryCount += 1;
    const logged = opts.logged ?? true;
    // Idempotent for the driver too (which then retries it after a lost connection or a client timeout, and runs
    // it on another node) only when a second run writes exactly what the first did.
    const isIdempotent = queries.every((q) => runsTwiceTheSame(q.stmt, q.params));
    const timestamp = logged && isIdempotent ? this.nextTimestamp() : undefined;
    const send = (asLogged: boolean) =>
      this.aroundRequest(
        queries.map((q) => q.stmt.cql),
        () =>
          this.client.batch(
            queries.map((q) => ({ query: q.stmt.cql, params: q.params })),
            { prepare: true, logged: asLogged, isIdempotent, consistency: this.consistency, ...(timestamp ? { timestamp } : {}) },
          ),
      );
    if (!timestamp) {
      await send(logged).catch((err: unknown) => this.appliedByBatchlog(logged, err));
      return;
    }
    await this.loggedWithFallback(send);
  }

  /**
   * A logged batch whose batchlog was written is applied even when it timed out after (the write type BATCH): by
   * its coordinator or by the batchlog's replay. Answering an error would have the client send it again, as a
   * second message. Any other error is thrown.
   */
  private appliedByBatchlog(logged: boolean, err: unknown): void {
    if (!logged || writeTimeoutType(err) !== 'BATCH') throw err;
    this.logger.warn({ err: describe(err) }, 'logged batch timed out after its batchlog was written; it will be applied');
  }

  /**
   * Runs a logged batch that a second run writes the same (idempotent, at one write timestamp), and the same batch
   * unlogged as well when the logged one is not answered within batchlogPatienceMs or its batchlog write timed out:
   * the first success answers. Its coordinator writes the batchlog to two other nodes and waits for both, so a node
   * that stalls, or has died and is not yet marked down, holds every logged batch up for the server's write timeout
   * (and a stalled coordinator, for the request timeout). Unlogged, each partition's mutations are written at the
   * consistency level: its success is the whole batch applied, which is all the batchlog was there to ensure.
   */
  private async loggedWithFallback(send: (asLogged: boolean) => Promise<unknown>): Promise<void> {
    const logged = send(true).then(
      () => undefined,
      (err: unknown) => this.appliedByBatchlog(true, err),
    );
    const patience = new AbortController();
    const first = await Promise.race([
      logged.then(
        () => 'applied' as const,
        (err: unknown) => err,
      ),
      delay(this.config.batchlogPatienceMs, 'waited' as const, { signal: patience.signal }).catch(() => 'applied' as const),
    ]);
    patience.abort();
    if (first === 'applied') return;
    if (first !== 'waited' && writeTimeoutType(first) !== 'BATCH_LOG') throw first;
    this.logger.warn(
      first === 'waited' ? { waitedMs: this.config.batchlogPatienceMs } : { err: describe(first) },
      'logged batch not answered in time (a batchlog node is slow or down); it runs unlogged too',
    );
    this.queryCount += 1;
    try {
      await Promise.any([logged, send(false)]);
    } catch (err) {
      // Both failed: the unlogged run's error is the one that tells why now.
      throw (err as AggregateError).errors[1];
    }
  }

  /** The next write timestamp of the driver's generator (microseconds, monotonic for this instance). */
  private nextTimestamp(): cassandra.types.Long {
    // The client's options are public at run time but missing from the driver's typings.
    const { options } = this.client as unknown as { options: cassandra.ClientOptions };
    const next = options.policies?.timestampGeneration?.next(this.client) ?? Date.now() * 1000;
    return typeof next === 'number' ? types.Long.fromNumber(next) : next;
  }

  /**
   * Idempotent cleanup statements as unlogged batches of at most `size`, one
   * after another: cheap, and safe to run again if one fails midway.
   */
  async batchInChunks(queries: Array<{ stmt: Statement; params: unknown[] }>, size: number): Promise<void> {
    for (let i = 0; i < queries.length; i += size) await this.batch(queries.slice(i, i + size), { logged: false });
  }

  /**
   * Runs a lightweight transaction. When it times out, or its connection is
   * lost once it was sent, its outcome is unknown: it may have applied. The
   * one rule, kept here: never retry it blindly; ask `learnOutcome` (which
   * reads back at SERIAL through readSerial) whether it applied. Applied: that
   * is the answer. Not applied: the SERIAL read has settled the partition, so
   * this attempt never will apply; unless the read back found its condition
   * false for good (settled), the statement runs once more as a new
   * attempt, whose own answer (or read back) is the one returned. A request
   * whose coordinator dies is then answered as if that node had not been
   * there, instead of "not applied" for a write that simply never ran. Should
   * that attempt's outcome be unknown too and read back as not applied, its
   * error is thrown (storage unavailable): never "not applied" for a
   * condition nobody evaluated.
   */
  async lwt(
    stmt: Statement,
    params: unknown[],
    learnOutcome: () => Promise<LwtOutcome>,
  ): Promise<LwtOutcome> {
    for (let attempt = 1; ; attempt++) {
      this.queryCount += 1;
      let result: ResultSet;
      try {
        result = await this.aroundRequest(stmt.cql, () => {
          const options = {
            prepare: true,
            isIdempotent: false,
            consistency: this.consistency,
            serialConsistency: this.serialConsistency,
            executionProfile: LWT_PROFILE,
          };
          return this.unlessCoordinatorSilent(this.client.execute(stmt.cql, params, options), options);
        });
      } catch (err) {
        if (!isUnknownOutcome(err)) throw err;
        this.logger.warn({ err: describe(err), cql: stmt.cql, attempt }, 'LWT outcome unknown; reading back at SERIAL');
        const learned = await untilAnswered(learnOutcome);
        if (learned.applied || learned.settled) return learned;
        // Not applied by either attempt, each for want of an answer, not because its condition failed: answering
        // "not applied" would be a guess at the condition. The error says storage did not answer (SERVICE_UNAVAILABLE),
        // and a retry (with the same idempotency key) runs it again.
        if (attempt === LWT_ATTEMPTS) throw err;
        continue;
      }
      const row = result.first();
      return { applied: Boolean(row?.['[applied]']), row };
    }
  }

  /**
   * The LWT's answer, or CoordinatorSilent once its coordinator has answered nothing for lwtPatienceMs (and the LWT
   * has waited that long): a coordinator stalled (a GC pause, a frozen VM) would otherwise hold it for the whole
   * request timeout. Its outcome is then unknown, and lwt() reads it back at SERIAL through the other replicas,
   * which also stops it applying later: their promise to the read's higher ballot rejects its proposal, and the
   * coordinator, past cas_contention_timeout when it resumes, does not begin another round.
   */
  private unlessCoordinatorSilent(request: Promise<ResultSet>, options: object): Promise<ResultSet> {
    const patience = this.config.lwtPatienceMs;
    if (patience <= 0) return request;
    return new Promise<ResultSet>((resolve, reject) => {
      const sentAt = Date.now();
      const watch = setInterval(() => {
        const host = coordinatorOf(options);
        if (!host || Date.now() - sentAt < patience || this.health.silentForMs(host) < patience) return;
        clearInterval(watch);
        // Nothing else goes there first (the read back, the next attempt) until it answers again.
        this.health.markSilent(host);
        reject(new CoordinatorSilent(host.address, patience));
      }, Math.min(250, Math.ceil(patience / 4)));
      request.then(
        (rs) => (clearInterval(watch), resolve(rs)),
        (err: unknown) => (clearInterval(watch), reject(err)),
      );
    });
  }

  async ping(timeoutMs = 2000): Promise<void> {
    await this.client.execute('SELECT release_version FROM system.local', [], {
      prepare: false,
      isIdempotent: true,
      readTimeout: timeoutMs,
      consistency: types.consistencies.localOne,
    });
  }

  /** Whether the keyspace answers a read at the configured consistency (a quorum of replicas is up, and agrees). */
  async quorumAnswers(): Promise<void> {
    await this.client.execute('SELECT version FROM schema_migrations LIMIT 1', [], { prepare: false, isIdempotent: true });
  }

  async shutdown(): Promise<void> {
    clearInterval(this.prober);
    await this.client.shutdown();
  }

  /**
   * Asks each node seen not to answer (NodeHealth) for its release version, directly. Query plans put such a node
   * after every node that answers, so no request of the app's reaches it while another answers: without a probe, a
   * node that stalled for a moment would be left out for good once it answered again. A probe it answers counts it
   * back in. One probe per node at a time, each given PROBE_TIMEOUT_MS.
   */
  private probeSilentNodes(): void {
    for (const host of this.health.silentHosts()) {
      if (this.probing.has(host)) continue;
      this.probing.add(host);
      this.client
        .execute('SELECT release_version FROM system.local', [], { host, prepare: false, isIdempotent: true, readTimeout: PROBE_TIMEOUT_MS, consistency: types.consistencies.localOne })
        .catch(() => undefined)
        .finally(() => this.probing.delete(host));
    }
  }
}

/**
 * How often, and how long, Database probes a node seen not to answer. Each probe a stalled node leaves unanswered
 * counts towards the driver's defunctReadTimeoutThreshold (64) on its connection: one every 2 s is 10 in a 20 s stall.
 */
const PROBE_EVERY_MS = 2_000;
const PROBE_TIMEOUT_MS = 2_000;

/** Runs of one LWT when the previous one's outcome was unknown and read back as not applied. */
const LWT_ATTEMPTS = 2;

/** Pauses between reads back of an LWT's outcome while storage cannot answer: under a second in all. */
const READ_BACK_PAUSES_MS = [100, 250, 500];

/**
 * Runs a read back, again after a pause while storage cannot answer it: an LWT whose connection was lost leaves
 * the driver reconnecting (its first attempt comes within 100 ms), and its outcome is worth that wait.
 */
async function untilAnswered<T>(read: () => Promise<T>): Promise<T> {
  for (const pause of READ_BACK_PAUSES_MS) {
    try {
      return await read();
    } catch (err) {
      if (!isStorageUnavailable(err)) throw err;
      await delay(pause);
    }
  }
  return read();
}

/**
 * The one place the driver's client options are built, for the app and the
 * migrator alike: contact points, data center, credentials, and how fast a
 * lost node is tried again. The driver's default reconnection policy backs off
 * to 10 minutes; after an outage that kept every request failing for tens of
 * seconds after the node was back. Here a lost node is tried every second at
 * most, so the app is ready again within about a second of CQL answering.
 */
export function clientOptions(
  config: CassandraConfig,
  contactPoints: string[],
  extra: Omit<cassandra.ClientOptions, 'contactPoints' | 'localDataCenter' | 'credentials'> = {},
): cassandra.ClientOptions {
  // Told of every request's outcome (and passing it on to the caller's tracker): which nodes answer.
  const health = extra.requestTracker instanceof NodeHealth ? extra.requestTracker : new NodeHealth(extra.requestTracker);
  return {
    contactPoints,
    localDataCenter: config.localDataCenter,
    credentials: config.username ? { username: config.username, password: config.password ?? '' } : undefined,
    ...extra,
    requestTracker: health,
    policies: {
      reconnection: new policies.reconnection.ExponentialReconnectionPolicy(100, 1000, false),
      retry: new RetryPolicy(),
      loadBalancing: stallAwareBalancing(config.localDataCenter, health.answering),
      ...extra.policies,
    },
    profiles: [new cassandra.ExecutionProfile(LWT_PROFILE, { loadBalancing: primaryFirstBalancing(config.localDataCenter, health.answering) })],
  };
}

export function toConsistencyKey(name: string): keyof typeof types.consistencies {
  const key = name.toLowerCase().replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
  if (!(key in types.consistencies)) throw new Error(`unknown consistency level ${name}`);
  return key as keyof typeof types.consistencies;
}

const CAS_WRITE_UNKNOWN = 0x1700; // protocol v5's explicit "LWT outcome unknown"

/**
 * The write type of a write timeout (undefined for any other error). For a logged batch: BATCH_LOG, its batchlog
 * could not be written and the batch did not run; BATCH, its batchlog was written and it will be applied all the
 * same.
 */
export function writeTimeoutType(err: unknown): string | undefined {
  if (!(err instanceof errors.ResponseError) || err.code !== types.responseErrorCodes.writeTimeout) return undefined;
  return (err as { writeType?: string }).writeType;
}

/**
 * The connection the request went out on closed before its answer came (its node was killed, or the network cut):
 * the driver retries an idempotent request elsewhere itself, and hands any other one back with this error.
 */
function isLostConnection(err: unknown): boolean {
  const e = err as { isSocketError?: boolean; requestNotWritten?: boolean };
  return err instanceof errors.DriverError && e.isSocketError === true;
}

/** Sent, then its connection lost: the node may have applied it. */
const isLostAfterSending = (err: unknown) => isLostConnection(err) && (err as { requestNotWritten?: boolean }).requestNotWritten !== true;

/** An LWT given up on because its coordinator answered nothing for CASSANDRA_LWT_PATIENCE_MS: its outcome is unknown. */
export class CoordinatorSilent extends Error {
  constructor(coordinator: string, patienceMs: number) {
    super(`The coordinator ${coordinator} answered nothing for ${patienceMs} ms`);
    this.name = 'CoordinatorSilent';
  }
}

/** Errors after which a write may or may not have been applied. */
export function isUnknownOutcome(err: unknown): boolean {
  if (err instanceof errors.OperationTimedOutError || err instanceof CoordinatorSilent || isLostAfterSending(err)) return true;
  if (err instanceof errors.NoHostAvailableError) {
    return Object.values(err.innerErrors ?? {}).some((inner) => isUnknownOutcome(inner));
  }
  if (err instanceof errors.ResponseError) {
    return (
      err.code === types.responseErrorCodes.writeTimeout ||
      err.code === types.responseErrorCodes.writeFailure ||
      err.code === CAS_WRITE_UNKNOWN
    );
  }
  return false;
}

/** Response codes by which a node says it cannot serve now (not that the request is wrong). */
const UNAVAILABLE_RESPONSES: ReadonlySet<number> = new Set([
  types.responseErrorCodes.unavailableException,
  types.responseErrorCodes.overloaded,
  types.responseErrorCodes.isBootstrapping,
  types.responseErrorCodes.readTimeout,
  types.responseErrorCodes.writeTimeout,
  types.responseErrorCodes.readFailure,
  types.responseErrorCodes.writeFailure,
]);

/** Errors that mean Cassandra could not be reached or could not answer in time: retry later, not a bug. */
export function isStorageUnavailable(err: unknown): boolean {
  if (err instanceof errors.NoHostAvailableError || err instanceof errors.OperationTimedOutError || err instanceof CoordinatorSilent) return true;
  if (err instanceof errors.BusyConnectionError || isLostConnection(err)) return true;
  if (err instanceof errors.ResponseError) return UNAVAILABLE_RESPONSES.has(err.code);
  return false;
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
