/**
 * Prometheus metrics of one instance, served at /metrics: GraphQL operations
 * by name and type with their durations (@graphql-yoga/plugin-prometheus),
 * errors by extensions.code, open WebSockets and live subscriptions, pub/sub
 * events, Cassandra requests as the driver times them, and the domain's own
 * counters. Each instance has its own registry, so several instances in one
 * process (the tests) never mix their numbers. Domain code counts through the
 * typed methods of Metrics and never touches prom-client.
 *
 * Every label has a bounded set of values: operation names are cut to 64
 * characters and, past 500 distinct ones (clients choose them), counted as
 * "other"; Cassandra errors are labelled by class, never by CQL or values.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, RequestListener } from 'node:http';
import { performance } from 'node:perf_hooks';
import cassandra from 'cassandra-driver';
import { getOperationAST, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MetricsConfig } from '../config.js';
import { maskedCode } from '../server/error-masking.js';

export const METRICS_PATH = '/metrics';

export type LoginFailureReason = 'unknown_login' | 'wrong_password';
/** Operations refused with RATE_LIMITED. */
const RATE_LIMITED_ACTIONS = ['login', 'register', 'change_password'] as const;
export type RateLimitedAction = (typeof RATE_LIMITED_ACTIONS)[number];
/** How a subscription reaches its client: graphql-ws, or HTTP (SSE or multipart). */
export type Transport = 'ws' | 'http';

/** Longest operation name kept in a label. */
const MAX_OPERATION_NAME_LENGTH = 64;
/** Distinct operation names one instance labels; later ones are counted as "other". */
const MAX_OPERATION_NAMES = 500;

const CASSANDRA_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];

interface OperationLabels {
  operationName: string;
  operationType: string;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly operationNames = new Set<string>();

  private readonly graphqlErrors = new Counter({
    name: 'parley_graphql_errors_total',
    help: 'Errors in GraphQL results (HTTP and WebSocket), by the extensions.code the client sees',
    labelNames: ['code', 'operation_type'] as const,
    registers: [this.registry],
  });
  private readonly webSocketsOpen = new Gauge({
    name: 'parley_websockets_open',
    help: 'WebSocket connections open on this instance',
    registers: [this.registry],
  });
  private readonly subscriptionsActive = new Gauge({
    name: 'parley_subscriptions_active',
    help: 'GraphQL subscriptions running on this instance, by transport',
    labelNames: ['transport'] as const,
    registers: [this.registry],
  });
  private readonly eventsPublished = new Counter({
    name: 'parley_events_published_total',
    help: 'Events this instance published, by the first segment of their channel (room, inbox, item, user, auth)',
    labelNames: ['channel_kind'] as const,
    registers: [this.registry],
  });
  private readonly eventsDelivered = new Counter({
    name: 'parley_events_delivered_total',
    help: "Events handed to listeners on this instance: subscribers' streams (channel_kind auth: the revocation list)",
    labelNames: ['channel_kind'] as const,
    registers: [this.registry],
  });
  private readonly loginFailures = new Counter({
    name: 'parley_login_failures_total',
    help: 'Logins refused with INVALID_CREDENTIALS, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly rateLimitedTotal = new Counter({
    name: 'parley_rate_limited_total',
    help: 'Operations refused with RATE_LIMITED, by action',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });
  private readonly purchasesRecoveredTotal = new Counter({
    name: 'parley_purchases_recovered_total',
    help: 'Purchases completed by the recovery job after their request died',
    registers: [this.registry],
  });
  private readonly cassandraDuration = new Histogram({
    name: 'parley_cassandra_request_duration_seconds',
    help: 'Requests sent to a Cassandra coordinator (retries included), as the driver times them',
    labelNames: ['kind', 'outcome'] as const,
    buckets: CASSANDRA_BUCKETS,
    registers: [this.registry],
  });
  private readonly cassandraErrors = new Counter({
    name: 'parley_cassandra_request_errors_total',
    help: "Failed Cassandra requests, by the driver's error class",
    labelNames: ['error'] as const,
    registers: [this.registry],
  });

  private readonly slowConsumerCloses = new Counter({
    name: 'parley_websocket_slow_consumer_closes_total',
    help: 'WebSockets closed (4413) because their unsent bytes passed WS_MAX_BUFFERED_BYTES',
    registers: [this.registry],
  });
  private readonly feedInterruptions = new Counter({
    name: 'parley_feed_interruptions_total',
    help: 'Times this instance lost pub/sub delivery (open room feeds are then told to catch up)',
    registers: [this.registry],
  });

  private readonly httpDuration = new Histogram({
    name: 'graphql_yoga_http_duration',
    help: 'Time spent on an HTTP request carrying a GraphQL operation (an SSE or multipart stream is not timed)',
    labelNames: ['operationName', 'operationType', 'method', 'statusCode'] as const,
    registers: [this.registry],
  });
  /** The operation each HTTP request carries, known once its document is parsed. */
  private readonly httpOperations = new WeakMap<IncomingMessage, OperationLabels>();

  constructor(readonly config: MetricsConfig) {
    // Series with known labels start at 0, so a rate over them exists before the first event.
    for (const reason of ['unknown_login', 'wrong_password'] as const) this.loginFailures.inc({ reason }, 0);
    for (const action of RATE_LIMITED_ACTIONS) this.rateLimitedTotal.inc({ action }, 0);
    for (const transport of ['ws', 'http'] as const) this.subscriptionsActive.set({ transport }, 0);
    if (config.enabled) collectDefaultMetrics({ register: this.registry });
  }

  loginFailure(reason: LoginFailureReason): void {
    this.loginFailures.inc({ reason });
  }

  rateLimited(action: RateLimitedAction): void {
    this.rateLimitedTotal.inc({ action });
  }

  slowConsumerClosed(): void {
    this.slowConsumerCloses.inc();
  }

  deliveryLost(): void {
    this.feedInterruptions.inc();
  }

  purchaseRecovered(): void {
    this.purchasesRecoveredTotal.inc();
  }

  eventPublished(channelKind: string): void {
    this.eventsPublished.inc({ channel_kind: channelKind });
  }

  eventDelivered(channelKind: string, count: number): void {
    this.eventsDelivered.inc({ channel_kind: channelKind }, count);
  }

  /** Counts a WebSocket as open until it closes. */
  trackWebSocket(socket: { on(event: 'close', listener: () => void): unknown }): void {
    this.webSocketsOpen.inc();
    // 'close' is emitted once: one listener function serves every socket, rather than a closure each.
    socket.on('close', this.webSocketClosed);
  }

  private readonly webSocketClosed = () => this.webSocketsOpen.dec();

  /** The driver's request tracker (client option `requestTracker`), or none when metrics are off. */
  cassandraRequestTracker(): cassandra.tracker.RequestTracker | undefined {
    return this.config.enabled ? new CassandraRequestMetrics(this.cassandraDuration, this.cassandraErrors) : undefined;
  }

  /** Counts each error of a result (or a phase) by the code its client sees. */
  countErrors(errors: readonly unknown[] | undefined, operationType = 'unknown'): void {
    for (const error of errors ?? []) {
      this.graphqlErrors.inc({ code: maskedCode(error), operation_type: operationType });
    }
  }

  /** A subscription is active from here until subscriptionEnded (src/server/live/live-subscriptions.ts calls both). */
  subscriptionStarted(transport: Transport): void {
    this.subscriptionsActive.inc({ transport });
  }

  subscriptionEnded(transport: Transport): void {
    this.subscriptionsActive.dec({ transport });
  }

  /**
   * The operation a request runs, as labels: its name as written in the
   * document (never the client's operationName parameter itself), or
   * "anonymous"; its type, or "unknown" before a document is known.
   */
  operationLabels(document: DocumentNode | undefined, context: unknown): OperationLabels {
    const operation = operationOf(document, context);
    return {
      operationName: this.operationNameLabel(operation?.name?.value),
      operationType: operation?.operation ?? 'unknown',
    };
  }

  private operationNameLabel(name: string | undefined): string {
    if (!name) return 'anonymous';
    const label = name.slice(0, MAX_OPERATION_NAME_LENGTH);
    if (this.operationNames.has(label)) return label;
    if (this.operationNames.size >= MAX_OPERATION_NAMES) return 'other';
    this.operationNames.add(label);
    return label;
  }

  /**
   * `listener`, timing each request that turns out to carry an operation (see
   * httpOperationParsed) from its arrival to the end of its answer, whichever
   * path serves it (src/server/http/json-fast-path.ts or Yoga). A stream (SSE,
   * multipart) lasts as long as its subscription and is left out.
   */
  timeHttpRequests(listener: RequestListener): RequestListener {
    if (!this.config.enabled) return listener;
    return (req, res) => {
      const start = performance.now();
      res.once('finish', () => {
        const labels = this.httpOperations.get(req);
        if (!labels || isStream(res.getHeader('content-type'))) return;
        this.httpDuration.observe({ ...labels, method: req.method ?? '', statusCode: res.statusCode }, (performance.now() - start) / 1000);
      });
      listener(req, res);
    };
  }

  /** The document an HTTP request carries is parsed: its request is timed under the operation's labels. */
  httpOperationParsed(req: IncomingMessage, document: DocumentNode, context: unknown): void {
    this.httpOperations.set(req, this.operationLabels(document, context));
  }

  /** The answer to a request for /metrics. */
  async scrape(request: Request, fetchAPI: { Response: typeof Response }): Promise<Response> {
    if (request.method !== 'GET') return new fetchAPI.Response(null, { status: 405, headers: { allow: 'GET' } });
    if (this.config.token && !bearerMatches(request.headers.get('authorization'), this.config.token)) {
      const challenge = { 'www-authenticate': 'Bearer realm="metrics"' };
      return new fetchAPI.Response('Unauthorized\n', { status: 401, headers: challenge });
    }
    const body = await this.registry.metrics();
    return new fetchAPI.Response(body, { headers: { 'content-type': this.registry.contentType } });
  }
}

function isStream(contentType: unknown): boolean {
  return typeof contentType === 'string' && (contentType.startsWith('text/event-stream') || contentType.startsWith('multipart/'));
}

/** The operation a request runs: the one its operationName parameter picks, or the only one. */
export function operationOf(document: DocumentNode | undefined, context: unknown): OperationDefinitionNode | null {
  const requested = (context as { params?: { operationName?: unknown } } | undefined)?.params?.operationName;
  return document ? (getOperationAST(document, typeof requested === 'string' ? requested : undefined) ?? null) : null;
}

type RequestTrackerClass = new () => cassandra.tracker.RequestTracker;
const RequestTrackerBase = (cassandra.tracker as unknown as { RequestTracker: RequestTrackerClass }).RequestTracker;

type CqlRequest = string | Array<{ query: string }>;

/** Times every request the driver sends (once per coordinator tried); labels never carry CQL or values. */
class CassandraRequestMetrics extends RequestTrackerBase {
  constructor(
    private readonly duration: Histogram<'kind' | 'outcome'>,
    private readonly errors: Counter<'error'>,
  ) {
    super();
  }

  override onSuccess(
    _host: unknown,
    query: CqlRequest,
    _parameters: unknown,
    _options: unknown,
    _requestLength: number,
    _responseLength: number,
    latency: number[],
  ): void {
    this.duration.observe({ kind: requestKind(query), outcome: 'success' }, seconds(latency));
  }

  override onError(
    _host: unknown,
    query: CqlRequest,
    _parameters: unknown,
    _options: unknown,
    _requestLength: number,
    err: Error,
    latency: number[],
  ): void {
    this.duration.observe({ kind: requestKind(query), outcome: 'error' }, seconds(latency));
    this.errors.inc({ error: errorClass(err) });
  }
}

const requestKind = (query: CqlRequest) => (Array.isArray(query) ? 'batch' : 'query');

/** process.hrtime's [seconds, nanoseconds] in seconds. */
const seconds = ([s = 0, ns = 0]: number[]) => s + ns / 1e9;

/** OperationTimedOutError, ResponseError, …: the class's name, if it looks like one. */
function errorClass(err: unknown): string {
  const name = (err as Error | undefined)?.name;
  return typeof name === 'string' && /^[A-Za-z]\w{0,63}$/.test(name) ? name : 'Error';
}

function bearerMatches(authorization: string | null, token: string): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  // Digests have one length, so the comparison takes the same time whatever was presented.
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return presented !== undefined && timingSafeEqual(digest(presented), digest(token));
}
