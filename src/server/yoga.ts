/**
 * The one graphql-yoga instance that serves HTTP, SSE and (through the
 * WebSocket bridge) graphql-ws: schema, limits, readiness, metrics, error masking.
 */
import { createYoga, useReadinessCheck, type Plugin as YogaPlugin, type YogaServerInstance } from 'graphql-yoga';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { buildContext, type Context } from '../resolvers/context.js';
import { httpContext } from './http/http-context.js';
import { Limits } from '../limits.js';
import type { Services } from '../resolvers/services.js';
import { schema } from '../schema/index.js';
import { corsFor, originPolicy } from './http/cors.js';
import { graphiqlOptions } from './http/graphiql.js';
import { useTrustedDocuments, type TrustedDocuments } from './http/trusted-documents.js';
import { maskError, useLimitErrorCodes, useRequestParseErrors, useValidationErrorLog } from './error-masking.js';
import { useLiveSubscriptions } from './live/live-subscriptions.js';
import { useSharedEventExecution } from './live/shared-execution.js';
import { useJitExecution, type CompiledOperations } from './jit-execution.js';
import { useRequestBodyLimit } from './http/request-body-limit.js';
import { useEventStreamsPerAddress, type LiveConnectionsPerAddress } from './live/live-connections-per-address.js';
import { yogaLogger } from '../observability/logging.js';
import { MAX_REQUEST_BYTES, type ServerContext } from './server-context.js';
import { useSseEventIds } from './live/sse-event-ids.js';
import { MAX_UPLOAD_REQUEST_BYTES, useUploads } from './http/files/uploads.js';
import { useAttachmentRoute } from './http/files/attachment-route.js';
import { useIdempotencyKeys } from './idempotency.js';

export type ParleyYoga = YogaServerInstance<ServerContext, Context>;

export interface YogaParts {
  trusted: TrustedDocuments;
  live: LiveConnectionsPerAddress;
  /** The metrics' plugins (none when metrics are off). */
  metrics: YogaPlugin[];
  /** Where operations compiled by graphql-jit are kept (absent when GRAPHQL_JIT is off). */
  compiled?: CompiledOperations;
  /** Tracing's plugin, when traces are on. */
  tracing?: YogaPlugin;
}

/** `tracing` (when on) goes first: its spans then cover what every other plugin does. */
export function buildYoga(svc: Services, { trusted, live, metrics, compiled, tracing }: YogaParts): ParleyYoga {
  const { config, logger } = svc;
  const plugins: YogaPlugin[] = [
    ...(tracing ? [tracing] : []),
    // Then metrics, so their timings take in the hooks of the plugins below.
    ...metrics,
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
      // Not ready: 503 with the reason (which service, what it said), as while the instance starts (server/http/starting.ts).
      check: async ({ fetchAPI }) => {
        const failed = await Promise.all([
          svc.db.ping().then(() => null, (err: Error) => `Cassandra: ${err.message}`),
          svc.pubsub.ping().then(() => null, (err: Error) => `pub/sub: ${err.message}`),
        ]);
        const reason = failed.filter(Boolean).join('; ');
        if (!reason) return true;
        logger.warn({ reason }, 'readiness check failed');
        return new fetchAPI.Response(JSON.stringify({ ready: false, reason }), {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': String(Limits.unavailableRetryAfterSeconds) },
        });
      },
    }),
    useLimitErrorCodes(),
    useValidationErrorLog(logger),
    useRequestParseErrors(),
    useRequestBodyLimit(MAX_REQUEST_BYTES, MAX_UPLOAD_REQUEST_BYTES),
    // Multipart uploads: one file of bounded size, and never from another site's form.
    useUploads(svc),
    // GET /attachments/<id>: the files, through the links Attachment.url signs.
    useAttachmentRoute(svc),
    // An SSE stream counts against its address's live connections, as a WebSocket does.
    useEventStreamsPerAddress(live, config.trustProxy),
    useTrustedDocuments(trusted),
    // Every subscription ends with its session (logout anywhere, or expiry), whatever the transport, and is counted while live.
    useLiveSubscriptions(svc.metrics),
    // A mutation sent with an idempotency key runs once per viewer and key; a retry gets its answer again.
    useIdempotencyKeys(svc),
    // Each event executed once for the subscribers that would get the same result, whatever the transport.
    useSharedEventExecution(),
    // SSE events carry their cursor as the event id, for EventSource's Last-Event-ID.
    useSseEventIds(),
    // Sets the execute function only: the hooks above see its results as they saw Yoga's executor's.
    ...(compiled ? [useJitExecution(compiled)] : []),
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
    context: ({ req, ws }) => (ws ? buildContext(svc, ws.session, ws.clientAddress, ws.requestId) : httpContext(svc, req!)),
    plugins,
  });
}

function useNoIntrospection(): YogaPlugin {
  return {
    onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
  };
}
