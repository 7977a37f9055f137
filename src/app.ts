/**
 * The app factory: createApp(options) builds an instance, start() brings up
 * storage, pub/sub and the HTTP + WebSocket server, stop() drains and shuts
 * everything down. src/main.ts and the tests both use it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createYoga, useReadinessCheck, type Plugin as YogaPlugin, type YogaServerInstance } from 'graphql-yoga';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ExecutionArgs } from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { pino, type Logger } from 'pino';
import { loadConfig, type Config } from './config.js';
import { buildContext, type Context } from './context.js';
import { Database } from './db/client.js';
import { defaultLocalNodeOptions, ensureLocalNode } from './db/local-node.js';
import { migrate } from './db/migrate.js';
import { createStores } from './db/stores.js';
import { RevocationStore } from './db/revocations.js';
import { ErrorCode } from './errors.js';
import { InProcessPubSub } from './pubsub/in-process.js';
import { RedisBackedPubSub } from './pubsub/redis.js';
import type { PubSub } from './pubsub/pubsub.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './auth/rate-limit.js';
import { hashPassword, scryptParams } from './auth/passwords.js';
import { TokenService, type Session } from './auth/tokens.js';
import { RevocationList } from './auth/revocation-list.js';
import { authenticate, bearerToken } from './auth/authenticate.js';
import { endWithSession } from './auth/live-session.js';
import { systemClock, type Clock, type Services } from './services.js';
import { schema } from './schema/index.js';
import { atTime } from './at-time.js';
import { startPurchaseRecovery } from './resolvers/marketplace/completion.js';

export interface AppOptions {
  config?: Config;
  clock?: Clock;
  logger?: Logger;
}

export interface App {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Available after start(). */
  readonly services: Services;
  readonly port: number;
  readonly url: string;
}

/** What the HTTP adapter or our WebSocket bridge hands Yoga for each operation. */
interface ServerContext {
  req: IncomingMessage;
  /** Set for WebSocket operations: authenticated once, at connection time. */
  ws?: { session: Session | null };
}

/** Largest HTTP body or WebSocket message accepted: far above any real operation, far below a memory problem. */
const MAX_REQUEST_BYTES = 1024 * 1024;

/** Subscriptions (and in-flight operations) one WebSocket may hold at once. */
export const MAX_OPERATIONS_PER_SOCKET = 100;

/** WebSocket close codes a client can act on. */
export const WS_CLOSE = {
  UNAUTHORIZED: 4401, // invalid, expired or revoked token
  GOING_AWAY: 1001, // server shutting down: reconnect elsewhere
} as const;

export function createApp(options: AppOptions = {}): App {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? pino({ level: config.logLevel, redact: ['password', '*.password', 'token', '*.token'] });
  let services: Services | undefined;
  let server: Server | undefined;
  let wss: WebSocketServer | undefined;
  let disposeWs: (() => Promise<void>) | undefined;
  let stopPurchaseRecovery: (() => Promise<void>) | undefined;
  const sockets = new Set<Socket>();

  function clientAddress(req: IncomingMessage): string {
    if (config.trustProxy) {
      // The rightmost entry is the one our own proxy appended; entries left of it are whatever the client sent.
      const forwarded = req.headers['x-forwarded-for'];
      const header = Array.isArray(forwarded) ? forwarded.join(',') : forwarded;
      const last = header?.split(',').at(-1)?.trim();
      if (last) return last;
    }
    return req.socket.remoteAddress ?? 'unknown';
  }

  async function buildServices(): Promise<Services> {
    let contactPoints = config.cassandra.contactPoints;
    if (contactPoints.length === 0) {
      const node = await ensureLocalNode(defaultLocalNodeOptions({ log: (line) => logger.info(line) }));
      contactPoints = [`${node.host}:${node.port}`];
    }
    if (config.cassandra.migrate) await migrate(config.cassandra, contactPoints, logger);
    const db = new Database(config.cassandra, logger, contactPoints);
    await db.connect();

    let pubsub: PubSub;
    let rateLimiter: RateLimiter;
    if (config.redisUrl) {
      const redisPubSub = RedisBackedPubSub.connect(config.redisUrl, logger, config.redisPrefix);
      pubsub = redisPubSub;
      rateLimiter = new RedisRateLimiter(redisPubSub.publisher, logger, `${config.redisPrefix}ratelimit:`);
    } else {
      pubsub = new InProcessPubSub(logger);
      rateLimiter = new MemoryRateLimiter();
    }
    const revocations = new RevocationList(new RevocationStore(db), pubsub, logger);
    // Independent: loading revocations, importing the key and the decoy hash (a full scrypt) run together.
    const [tokens, decoyPasswordHash] = await Promise.all([
      TokenService.create(config.auth, config.production),
      hashPassword(randomBytes(16).toString('hex'), scryptParams(config.auth)),
      revocations.start(config.auth.tokenTtlSeconds * 1000),
    ]);
    return {
      config,
      logger,
      clock: options.clock ?? systemClock,
      db,
      stores: createStores(db),
      pubsub,
      tokens,
      revocations,
      rateLimiter,
      decoyPasswordHash,
    };
  }

  function buildYoga(svc: Services): YogaServerInstance<ServerContext, Context> {
    const plugins: YogaPlugin[] = [
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
      {
        // Every subscription ends with its session (logout anywhere, or expiry), whatever the transport.
        onSubscribe: ({ args }) => ({
          onSubscribeResult: ({ result, setResult }) => {
            if (Symbol.asyncIterator in result) setResult(endWithSession(result, args.contextValue as unknown as Context));
          },
        }),
      },
    ];
    if (!config.exposeSchema) plugins.push(useNoIntrospection());

    return createYoga<ServerContext, Context>({
      schema,
      graphqlEndpoint: '/graphql',
      healthCheckEndpoint: '/health',
      landingPage: false,
      graphiql: config.exposeSchema ? { title: 'Parley', subscriptionsProtocol: 'WS' } : false,
      renderGraphiQL,
      logging: {
        debug: (...args) => logger.debug(logLine(args)),
        info: (...args) => logger.info(logLine(args)),
        warn: (...args) => logger.warn(logLine(args)),
        error: (...args) => logger.error(logLine(args)),
      },
      // Bigger bodies are refused with 413 before parsing (Yoga's default is 25 MB).
      maxRequestBodySize: MAX_REQUEST_BYTES,
      maskedErrors: {
        maskError: (error) => {
          // Duck-typed: graphql can be loaded twice (ESM and CJS), which defeats instanceof.
          if (hasErrorCode(error)) return error as Error;
          if (isRequestError(error)) return withCode(error as GraphQLError, requestErrorCode(error as GraphQLError));
          const original = (error as { originalError?: unknown }).originalError ?? error;
          if (hasErrorCode(original)) return error as Error;
          logger.error({ err: original }, 'unexpected error');
          return new GraphQLError('Unexpected error', {
            extensions: { code: ErrorCode.INTERNAL_SERVER_ERROR },
            path: (error as GraphQLError).path,
          });
        },
      },
      context: async ({ req, ws }) => {
        const session = ws ? ws.session : await httpSession(svc, req);
        return buildContext(svc, session, clientAddress(req));
      },
      plugins,
    });
  }

  function httpSession(svc: Services, req: IncomingMessage): Promise<Session | null> {
    return authenticate(svc, bearerToken(req.headers.authorization));
  }

  function attachWebSockets(svc: Services, yoga: YogaServerInstance<ServerContext, Context>, httpServer: Server) {
    wss = new WebSocketServer({ server: httpServer, path: yoga.graphqlEndpoint, maxPayload: MAX_REQUEST_BYTES });
    const socketsByJti = new Map<string, Set<WebSocket>>();
    const unwatch = svc.revocations.onRevoke((jti) => {
      for (const socket of socketsByJti.get(jti) ?? []) socket.close(WS_CLOSE.UNAUTHORIZED, 'Unauthorized: token revoked');
    });
    const wsServer = useServer<Record<string, unknown>, { wsSession?: Session | null }>(
      {
        execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => unknown }).execute(args) as never,
        subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => unknown }).subscribe(args) as never,
        onConnect: async (ctx) => {
          const params = ctx.connectionParams ?? {};
          const token = bearerToken(params.authorization ?? params.Authorization ?? params.token);
          try {
            const session = await authenticate(svc, token);
            ctx.extra.wsSession = session;
            if (session) {
              const set = socketsByJti.get(session.jti) ?? new Set();
              set.add(ctx.extra.socket);
              socketsByJti.set(session.jti, set);
              ctx.extra.socket.once('close', () => {
                set.delete(ctx.extra.socket);
                if (set.size === 0) socketsByJti.delete(session.jti);
              });
              // Close the socket when the token expires: a session never outlives its token.
              const stopTimer = atTime(session.expiresAt, () =>
                ctx.extra.socket.close(WS_CLOSE.UNAUTHORIZED, 'Unauthorized: token expired'),
              );
              ctx.extra.socket.once('close', stopTimer);
            }
            return true;
          } catch (err) {
            const reason = err instanceof GraphQLError ? err.message : 'Invalid token';
            ctx.extra.socket.close(WS_CLOSE.UNAUTHORIZED, `Unauthorized: ${reason}`.slice(0, 120));
            return false;
          }
        },
        onSubscribe: async (ctx, _id, payload) => {
          // Each operation holds a listener and a buffer: one socket may not hold without bound.
          // graphql-ws has already registered this one in ctx.subscriptions.
          if (Object.keys(ctx.subscriptions).length > MAX_OPERATIONS_PER_SOCKET) {
            return [
              new GraphQLError(`At most ${MAX_OPERATIONS_PER_SOCKET} operations may run at once on one connection`, {
                extensions: { code: ErrorCode.TOO_MANY_SUBSCRIPTIONS },
              }),
            ];
          }
          const { schema: s, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
            req: ctx.extra.request,
            ws: { session: ctx.extra.wsSession ?? null },
            params: payload,
          } as ServerContext & { params: unknown });
          let document;
          try {
            document = parse(payload.query);
          } catch (err) {
            return [err instanceof GraphQLError ? err : new GraphQLError('Syntax error')];
          }
          const errors = validate(s, document);
          if (errors.length > 0) return errors;
          return {
            schema: s,
            document,
            operationName: payload.operationName,
            variableValues: payload.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          };
        },
      },
      wss,
    );
    disposeWs = async () => {
      unwatch();
      for (const client of wss!.clients) client.close(WS_CLOSE.GOING_AWAY, 'Server shutting down');
      await wsServer.dispose();
    };
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
      services = await buildServices();
      const yoga = buildYoga(services);
      server = createServer(yoga);
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
      attachWebSockets(services, yoga, server);
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(config.port, config.host, () => resolve());
      });
      logger.info({ url: `${app.url}/graphql` }, 'Parley is listening');
      // Completes purchases bound by a request that died before completing them: now, then periodically.
      stopPurchaseRecovery = startPurchaseRecovery(services);
    },

    async stop() {
      if (server) {
        logger.info('Parley stopping: refusing new connections, closing WebSockets with 1001, draining');
        const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
        server.closeIdleConnections();
        await disposeWs?.();
        // Give in-flight requests a moment to finish, then cut long-lived ones (SSE streams).
        const grace = setTimeout(() => server?.closeAllConnections(), 2000);
        await closed;
        clearTimeout(grace);
        for (const socket of sockets) socket.destroy();
        server = undefined;
      }
      await stopPurchaseRecovery?.();
      stopPurchaseRecovery = undefined;
      if (services) {
        await services.revocations.stop();
        await services.pubsub.close();
        await services.db.shutdown();
        services = undefined;
      }
      logger.info('Parley stopped');
    },
  };
  return app;
}

/**
 * graphql-armor throws its limit errors from parse and validate, without a
 * code. Turn them into QUERY_TOO_COMPLEX errors reported like any validation
 * error, on HTTP and WebSocket alike. Must come after the armor plugin.
 */
function useLimitErrorCodes(): YogaPlugin {
  const LIMIT = /(depth limit|aliases limit|token limit|directives limit)/i;
  const tag = (err: unknown) =>
    err instanceof Error && LIMIT.test(err.message)
      ? new GraphQLError(err.message.replace(/^Syntax Error: /, ''), {
          extensions: { code: ErrorCode.QUERY_TOO_COMPLEX },
        })
      : err;
  return {
    onParse: ({ parseFn, setParseFn }) => {
      setParseFn((source, opts) => {
        try {
          return parseFn(source, opts);
        } catch (err) {
          throw tag(err);
        }
      });
    },
    onValidate: ({ validateFn, setValidationFn }) => {
      setValidationFn((...args) => {
        try {
          return validateFn(...args);
        } catch (err) {
          const tagged = tag(err);
          if (tagged !== err) return [tagged as GraphQLError];
          throw err;
        }
      });
    },
  };
}

/** An error that carries one of our stable codes. */
function hasErrorCode(err: unknown): boolean {
  const code = (err as { extensions?: { code?: unknown } } | undefined)?.extensions?.code;
  return typeof code === 'string' && code in ErrorCode;
}

/**
 * Errors raised before any resolver ran: syntax, validation, and variables of
 * the wrong type (those carry an originalError from the scalar's parser).
 */
function isRequestError(err: unknown): boolean {
  const e = err as { name?: string; path?: unknown } | undefined;
  return e?.name === 'GraphQLError' && !e.path;
}

function requestErrorCode(err: GraphQLError): ErrorCode {
  if (/^Syntax Error/.test(err.message)) return ErrorCode.GRAPHQL_PARSE_FAILED;
  if (/^Variable "\$/.test(err.message)) return ErrorCode.BAD_USER_INPUT;
  return ErrorCode.GRAPHQL_VALIDATION_FAILED;
}

function withCode(err: GraphQLError, code: ErrorCode): GraphQLError {
  const field = code === ErrorCode.BAD_USER_INPUT ? variableField(err.message) : undefined;
  return new GraphQLError(err.message, {
    nodes: err.nodes,
    source: err.source,
    positions: err.positions,
    extensions: { ...err.extensions, code, ...(field ? { field } : {}) },
  });
}

/**
 * The input a variable error is about, named like our own field paths:
 * 'Variable "$input" got invalid value … at "input.unitPrice"; …' → "input.unitPrice",
 * 'Variable "$login" of required type …' → "login".
 */
function variableField(message: string): string | undefined {
  const nested = /^Variable "\$[^"]+" got invalid value .*? at "([^"]+)";/s.exec(message);
  if (nested) return nested[1];
  const variable = /^Variable "\$([^"]+)"/.exec(message)?.[1];
  const missing = /; Field "([^"]+)" of required type .* was not provided\.$/s.exec(message)?.[1];
  return variable && missing ? `${variable}.${missing}` : variable;
}

/**
 * Yoga's log lines, with nothing a client sent in them: a GraphQL error's message
 * or printed form can quote the query or the variables (a password, say), and
 * other arguments can be request parameters. Only plain strings, error names
 * and codes, and the messages of non-GraphQL errors (ours or the driver's) pass.
 */
function logLine(args: unknown[]): string {
  return args
    .map((a) => {
      if (typeof a === 'string') return a;
      if (a instanceof Error || (a as { name?: unknown })?.name === 'GraphQLError') {
        const e = a as Error & { extensions?: { code?: unknown } };
        return e.name === 'GraphQLError' ? `GraphQLError[${String(e.extensions?.code ?? 'no code')}]` : `${e.name}: ${e.message}`;
      }
      return `[${typeof a}]`;
    })
    .join(' ');
}

function useNoIntrospection(): YogaPlugin {
  return {
    onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
  };
}
