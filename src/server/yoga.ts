/**
 * The one graphql-yoga instance that serves HTTP, SSE and (through the
 * WebSocket bridge) graphql-ws: schema, limits, readiness, metrics, error masking.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createYoga, useReadinessCheck, type Plugin as YogaPlugin, type YogaServerInstance } from 'graphql-yoga';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { buildContext, type Context } from '../context.js';
import type { Services } from '../services.js';
import type { Session } from '../auth/tokens.js';
import { authenticate, bearerToken } from '../auth/authenticate.js';
import { schema } from '../schema/index.js';
import { clientAddress } from './client-address.js';
import { corsFor, originPolicy } from './cors.js';
import { graphiqlOptions } from './graphiql.js';
import { useTrustedDocuments, type TrustedDocuments } from './trusted-documents.js';
import { maskError, useLimitErrorCodes, useRequestParseErrors, useValidationErrorLog } from './error-masking.js';
import { useMetrics } from './metrics-plugins.js';
import { useLiveSubscriptions } from './live-subscriptions.js';
import { useSharedEventExecution } from './shared-execution.js';
import { useJitExecution } from './jit-execution.js';
import { useRequestBodyLimit } from './request-body-limit.js';
import { useEventStreamsPerAddress, type LiveConnectionsPerAddress } from './live-connections-per-address.js';
import { yogaLogger } from './logging.js';
import { currentRequestScope } from './request-scope.js';
import { Limits } from '../limits.js';
import { MAX_REQUEST_BYTES, type ServerContext } from './server-context.js';
import { useSseEventIds } from './sse-event-ids.js';

export type ParleyYoga = YogaServerInstance<ServerContext, Context>;

/** `tracing` (when on) goes first: its spans then cover what every other plugin does. */
export function buildYoga(svc: Services, trusted: TrustedDocuments, live: LiveConnectionsPerAddress, tracing?: YogaPlugin): ParleyYoga {
  const { config, logger } = svc;
  const plugins: YogaPlugin[] = [
    ...(tracing ? [tracing] : []),
    // Then metrics, so their timings take in the hooks of the plugins below.
    ...useMetrics(svc.metrics),
    EnvelopArmorPlugin({
      maxDepth: { n: config.limits.maxDepth },
      maxAliases: { n: config.limits.maxAliases },
      maxTokens: { n: config.limits.maxTokens },
      maxDirectives: { n: config.limits.maxDirectives },
      // Cost is computed by Pothos' complexity plugin, which knows page sizes.
      costLimit: { enabled: false },
      blockFieldSuggestion: { enabled: !config.exposeSchema },
    }) as YogaPlugin,
    useReadinessCheck({
      endpoint: '/ready',
      check: async () => {
        try {
          await Promise.all([svc.db.ping(), svc.pubsub.ping()]);
          return true;
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'readiness check failed');
          return false;
        }
      },
    }),
    useLimitErrorCodes(),
    useValidationErrorLog(logger),
    useRequestParseErrors(),
    useRequestBodyLimit(MAX_REQUEST_BYTES),
    // An SSE stream counts against its address's live connections, as a WebSocket does.
    useEventStreamsPerAddress(live, config.trustProxy),
    useTrustedDocuments(trusted),
    // Every subscription ends with its session (logout anywhere, or expiry), whatever the transport, and is counted while live.
    useLiveSubscriptions(svc.metrics),
    // Each event executed once for the subscribers that would get the same result, whatever the transport.
    useSharedEventExecution(),
    // SSE events carry their cursor as the event id, for EventSource's Last-Event-ID.
    useSseEventIds(),
    // Sets the execute function only: the hooks above see its results as they saw Yoga's executor's.
    ...(config.graphqlJit ? [useJitExecution(Limits.jit)] : []),
  ];
  if (!config.exposeSchema) plugins.push(useNoIntrospection());

  return createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/health',
    landingPage: false,
    graphiql: config.exposeSchema ? graphiqlOptions() : false,
    // Loaded on first use: its bundle is a 28 MB string in the heap, and production never serves GraphiQL.
    renderGraphiQL: async (options) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    cors: corsFor(originPolicy(config)),
    logging: yogaLogger(logger),
    // Bigger bodies are refused with 413 before parsing by useRequestBodyLimit, which costs less per request.
    maxRequestBodySize: false,
    maskedErrors: { maskError: maskError(logger) },
    context: async ({ req, ws }) => {
      if (ws) return buildContext(svc, ws.session, ws.clientAddress, ws.requestId);
      const session = await httpSession(svc, req!);
      const requestId = currentRequestScope()?.requestId ?? randomUUID();
      const ctx = buildContext(svc, session, clientAddress(req!, config.trustProxy), requestId);
      const lastEventId = req!.headers['last-event-id'];
      if (typeof lastEventId === 'string' && lastEventId !== '') ctx.lastEventId = lastEventId;
      return ctx;
    },
    plugins,
  });
}

function httpSession(svc: Services, req: IncomingMessage): Promise<Session | null> {
  return authenticate(svc, bearerToken(req.headers.authorization));
}

function useNoIntrospection(): YogaPlugin {
  return {
    onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
  };
}
