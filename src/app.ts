/**
 * The app factory: createApp(options) builds an instance, start() brings up
 * storage, pub/sub and the HTTP + WebSocket server, stop() drains and shuts
 * everything down. src/main.ts and the tests both use it. What the server is
 * made of lives in src/server/, a file per concern.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { loadConfig, type Config } from './config.js';
import type { Services } from './resolvers/services.js';
import type { Clock } from './clock.js';
import { startBackgroundJobs, type BackgroundJob } from './server/background-jobs.js';
import { buildServices } from './server/build-services.js';
import { buildYoga } from './server/yoga.js';
import { withJsonFastPath, type YogaPipeline } from './server/http/json-fast-path.js';
import { passwordShedding } from './server/http/load-shedding.js';
import { CompiledOperations } from './server/jit-execution.js';
import { httpContext } from './server/http/http-context.js';
import { Limits } from './limits.js';
import { operationMetrics } from './observability/metrics-plugins.js';
import { MAX_REQUEST_BYTES } from './server/server-context.js';
import { attachWebSockets, type WebSocketBridge } from './server/live/websocket.js';
import { LiveConnectionsPerAddress } from './server/live/live-connections-per-address.js';
import { createLogger } from './observability/logging.js';
import type { MarketplaceHooks } from './resolvers/marketplace/runtime.js';
import { withRequestId } from './server/http/request-id.js';
import { keepAliveConnections } from './server/keep-alive.js';
import { TrustedDocuments } from './server/http/trusted-documents.js';
import { startTracing, type Tracing } from './observability/tracing.js';
import { refuseUpgradeWhileStarting, StartupState, startingListener } from './server/http/starting.js';

export interface AppOptions {
  config?: Config;
  clock?: Clock;
  logger?: Logger;
  /** Spans go to this processor whatever the OTEL_* settings say (tests read them from memory). */
  tracing?: { spanProcessor: SpanProcessor };
  /** Fault hooks a test uses to interrupt a purchase at a chosen step; never set in production. */
  hooks?: MarketplaceHooks;
}

export interface App {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Available after start(). */
  readonly services: Services;
  readonly port: number;
  readonly url: string;
}

/** Yoga, and the timed request listener that serves through it: the JSON fast path in front, unless turned off. */
function graphqlServing(svc: Services, logger: Logger, trusted: TrustedDocuments, live: LiveConnectionsPerAddress, tracing: Tracing | undefined) {
  const { config } = svc;
  const compiled = config.graphqlJit ? new CompiledOperations(Limits.jit) : undefined;
  const metrics = operationMetrics(svc.metrics);
  const yoga = buildYoga(svc, { trusted, live, metrics: metrics.plugins, compiled, tracing: tracing?.plugin });
  const prepared = compiled && {
    operations: compiled,
    context: (req: IncomingMessage) => httpContext(svc, req),
    metrics: metrics.prepared,
    shedding: passwordShedding(svc.passwords),
  };
  const listener = config.httpFastPath
    ? withJsonFastPath(yoga as unknown as YogaPipeline, { maxBodyBytes: MAX_REQUEST_BYTES, maxTokens: config.limits.maxTokens, trusted, logger, prepared })
    : yoga;
  return { yoga, listener: svc.metrics.timeHttpRequests(listener) };
}

export function createApp(options: AppOptions = {}): App {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? createLogger(config);
  let services: Services | undefined;
  let server: Server | undefined;
  let webSockets: WebSocketBridge | undefined;
  let stopBackgroundJobs: BackgroundJob | undefined;
  let tracing: Tracing | undefined;
  const sockets = new Set<Socket>();

  /** Stops listening, closes WebSockets with 1001, and lets in-flight requests finish for a moment. */
  async function closeServer(): Promise<void> {
    if (!server) return;
    const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
    server.closeIdleConnections();
    await webSockets?.dispose();
    // Give in-flight requests a moment to finish, then cut long-lived ones (SSE streams).
    const grace = setTimeout(() => server?.closeAllConnections(), 2000);
    await closed;
    clearTimeout(grace);
    for (const socket of sockets) socket.destroy();
    server = undefined;
  }

  const app: App = {
    get services() {
      if (!services) throw new Error('app not started');
      return services;
    },
    get port() {
      return (server?.address() as AddressInfo | null)?.port ?? config.port;
    },
    get url() {
      return `http://127.0.0.1:${app.port}`;
    },

    async start() {
      // Read first: a missing or broken manifest stops the start before anything is connected.
      const trusted = TrustedDocuments.load(config.trustedDocuments);
      tracing = startTracing(config.tracing, config.cassandra.keyspace, options.tracing?.spanProcessor);
      // Listening comes first: while storage cannot serve yet, probes and clients are told why (server/http/starting.ts).
      const startup = new StartupState();
      let serving: RequestListener = startingListener(startup);
      server = createServer(withRequestId((req, res) => serving(req, res), config.trustProxy));
      keepAliveConnections(server, config.httpKeepAliveTimeoutMs);
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
      server.on('upgrade', refuseUpgradeWhileStarting);
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(config.port, config.host, () => resolve());
      });
      logger.info({ url: `${app.url}/graphql` }, 'Parley is starting');
      try {
        services = await buildServices(config, logger, options.clock, tracing?.aroundCql, options.hooks, (reason) => startup.waitingFor(reason));
      } catch (err) {
        await closeServer();
        throw err;
      }
      // One count of live connections per address for WebSockets and SSE streams alike.
      const live = new LiveConnectionsPerAddress(config.maxLiveConnectionsPerAddress);
      const { yoga, listener } = graphqlServing(services, logger, trusted, live, tracing);
      serving = listener;
      server.off('upgrade', refuseUpgradeWhileStarting);
      webSockets = attachWebSockets(services, yoga, server, trusted, live);
      logger.info({ url: `${app.url}/graphql` }, 'Parley is listening');
      // Purchase recovery: completes purchases bound by a request that died before completing them.
      stopBackgroundJobs = startBackgroundJobs(services);
    },

    async stop() {
      if (server) logger.info('Parley stopping: refusing new connections, closing WebSockets with 1001, draining');
      await closeServer();
      await stopBackgroundJobs?.();
      stopBackgroundJobs = undefined;
      if (services) {
        // First, so that nothing failing below leaves its threads: no request is left to ask for a hash (one running ends).
        await services.passwords.close();
        await services.revocations.stop();
        // Reaction events still waiting out their coalescing window go now, while pub/sub is open.
        await services.rooms.coalescedEvents.flush();
        await services.pubsub.close();
        await services.db.shutdown();
        services = undefined;
      }
      // Last, so the spans of the last operations are exported.
      await tracing?.shutdown();
      tracing = undefined;
      logger.info('Parley stopped');
    },
  };
  return app;
}
