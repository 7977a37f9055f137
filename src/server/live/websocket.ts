/**
 * graphql-ws on the same port and path as HTTP: each operation runs through
 * the same Yoga pipeline (limits, masking, context) as an HTTP request.
 */
import type { IncomingMessage, Server } from 'node:http';
import { getOperationAST, GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SubscribePayload } from 'graphql-ws';
import { serveGraphqlWs, SLOW_CONSUMER_CLOSE, type NextSender, type Transport } from './graphql-ws-transport.js';
import { TokenWatch } from './token-watch.js';
import { offerDirectSink, type DirectSink } from './shared-execution.js';
import { sessionEnded } from './live-session.js';
import type { Services } from '../../resolvers/services.js';
import type { Session } from '../../auth/tokens.js';
import { authenticate, bearerToken, refusalOf, revokedToken, TokenRefusal } from '../../auth/authenticate.js';
import { ErrorCode } from '../../errors.js';
import { MAX_REQUEST_BYTES, type ServerContext } from '../server-context.js';
import type { ParleyYoga } from '../yoga.js';
import type { TrustedDocuments } from '../http/trusted-documents.js';
import type { Context } from '../../resolvers/context.js';
import { mask, maskError } from '../error-masking.js';
import { allowsUpgrade, originPolicy } from '../http/cors.js';
import { requestIdFor } from '../http/request-id.js';
import { clientAddress } from '../http/client-address.js';
import { runInRequestScope } from '../http/request-scope.js';
import type { LiveConnectionsPerAddress } from './live-connections-per-address.js';

/** Subscriptions (and in-flight operations) one WebSocket may hold at once. */
export const MAX_OPERATIONS_PER_SOCKET = 100;

/** WebSocket close codes a client can act on (docs/api.md lists them with what a client does). */
export const WS_CLOSE = {
  /** Invalid or revoked token: the session is over; log in again. */
  UNAUTHORIZED: 4401,
  /** The token expired: get a fresh one (log in) and reconnect. */
  TOKEN_EXPIRED: 4419,
  /** Server shutting down: reconnect (to another instance). */
  GOING_AWAY: 1001,
  /** The client fell too far behind (its unsent bytes passed WS_MAX_BUFFERED_BYTES): reconnect and catch up. */
  SLOW_CONSUMER: SLOW_CONSUMER_CLOSE,
  /** A message no client may send (or not a graphql-ws message at all): fix the client. */
  BAD_REQUEST: 4400,
} as const;

/** Where a client may put its token in connection_init's payload. */
const TOKEN_PARAMS = ['authorization', 'Authorization', 'token'] as const;

type SocketExtra = {
  /** The session the connection authenticated with (connectionParams), or null. */
  wsSession?: Session | null;
  /** Tokens (by jti) whose revocation or expiry closes this socket: one, or a few. */
  watchedJtis: string[];
  /** The connection's id (a trusted proxy's x-request-id on the upgrade, or a new one); operations extend it. */
  connectionId: string;
  /** Where the upgrade request came from (see clientAddress): each operation's context carries it. */
  clientAddress: string;
  operations: number;
};

function inOperationScope<T>(args: ExecutionArgs, run: () => T): T {
  return runInRequestScope({ requestId: (args.contextValue as Context).requestId }, run);
}

/** The bearer token among an operation's `extensions.headers`, whatever the header's case. */
function operationHeaderToken(extensions: Record<string, unknown> | undefined | null): string | null {
  const headers = extensions?.headers;
  if (!headers || typeof headers !== 'object') return null;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'authorization') return bearerToken(value);
  }
  return null;
}

/**
 * A subscription's results written to its socket at once (shared-execution.ts), while its
 * session holds: once it has ended, the result goes the long way, and ends the subscription
 * with UNAUTHENTICATED (live-subscriptions.ts).
 */
class OperationSink implements DirectSink {
  constructor(
    private readonly sender: NextSender,
    private readonly ctx: Context,
  ) {}

  deliver(result: ExecutionResult): boolean {
    if (sessionEnded(this.ctx) !== null) return false;
    this.sender.send(result);
    return true;
  }
}

export interface WebSocketBridge {
  /** Closes every socket with 1001 and stops accepting new ones. */
  dispose(): Promise<void>;
}

/** The socket server on Yoga's endpoint, refusing a foreign origin (403) and an address over its share (429). */
function liveSocketServer(svc: Services, yoga: ParleyYoga, httpServer: Server, live: LiveConnectionsPerAddress): WebSocketServer {
  const origins = originPolicy(svc.config);
  const wss = new WebSocketServer({
    server: httpServer,
    path: yoga.graphqlEndpoint,
    maxPayload: MAX_REQUEST_BYTES,
    // A page from a foreign origin cannot open a socket (answered 403), as it cannot make an HTTP request;
    // an address that holds its share of sockets cannot open another (429) until one closes.
    verifyClient: ({ req }: { req: IncomingMessage }, answer: (ok: boolean, status?: number, message?: string) => void) => {
      if (!allowsUpgrade(origins, req)) return answer(false, 403, 'Origin not allowed');
      if (live.full(clientAddress(req, svc.config.trustProxy))) return answer(false, 429, 'Too many live connections from this address');
      answer(true);
    },
  });
  wss.on('connection', (socket, req) => {
    svc.metrics.trackWebSocket(socket);
    live.opened(socket, clientAddress(req, svc.config.trustProxy));
  });
  return wss;
}

function closeRefused(socket: WebSocket, err: unknown): void {
  const expired = refusalOf(err) === TokenRefusal.EXPIRED;
  const reason = err instanceof GraphQLError ? err.message : 'Invalid token';
  socket.close(expired ? WS_CLOSE.TOKEN_EXPIRED : WS_CLOSE.UNAUTHORIZED, `Unauthorized: ${reason}`.slice(0, 120));
}

/** What preparing an operation needs of the bridge. */
interface Bridge {
  svc: Services;
  yoga: ParleyYoga;
  trusted: TrustedDocuments;
  tokens: TokenWatch;
  maskAndLog: ReturnType<typeof maskError>;
  transport: () => Transport;
}

type SocketContext = { extra: SocketExtra & { socket: WebSocket }; subscriptions: Record<string, unknown>; connectionParams?: Readonly<Record<string, unknown>> };

/** connection_init: the token, if any, authenticates the connection; a refused one closes it. */
async function connect(svc: Services, tokens: TokenWatch, ctx: SocketContext): Promise<boolean> {
  const params = (ctx.connectionParams ?? {}) as Record<string, unknown>;
  const token = bearerToken(params.authorization ?? params.Authorization ?? params.token);
  // graphql-ws keeps the connection_init payload for the connection's life; the token need not stay
  // in memory (or in a heap dump) that long: the session it proves does.
  for (const key of TOKEN_PARAMS) delete params[key];
  try {
    const session = await authenticate(svc, token);
    ctx.extra.wsSession = session;
    if (session) tokens.watch(ctx.extra, session);
    return true;
  } catch (err) {
    closeRefused(ctx.extra.socket, err);
    return false;
  }
}

/** The session an operation runs as: the connection's, or one its own headers bring; or the errors that refuse it. */
async function operationSession(bridge: Bridge, ctx: SocketContext, payload: SubscribePayload): Promise<Session | null | GraphQLError[]> {
  const { svc, tokens } = bridge;
  let session = ctx.extra.wsSession ?? null;
  // A revocation this instance missed (pub/sub down) did not close the socket: check it now.
  if (session && (await svc.revocations.check(session))) {
    const refused = revokedToken();
    setImmediate(() => closeRefused(ctx.extra.socket, refused));
    return [refused];
  }
  // GraphiQL (and Yoga's other clients) send their headers with each operation; a token there
  // authenticates this operation, with the same checks as one given at connect time.
  const headerToken = operationHeaderToken(payload.extensions);
  if (headerToken) {
    try {
      session = await authenticate(svc, headerToken);
    } catch (err) {
      // The operation's error first, so GraphiQL shows why; then the socket closes as at connect time.
      setImmediate(() => closeRefused(ctx.extra.socket, err));
      return [err as GraphQLError];
    }
    if (session) tokens.watch(ctx.extra, session);
  }
  return session;
}

/** subscribe: the operation's session, document and context through Yoga's pipeline, or the errors that refuse it. */
async function prepareOperation(bridge: Bridge, ctx: SocketContext, id: string, payload: SubscribePayload, requestId: string) {
  // Each operation holds a listener and a buffer: one socket may not hold without bound.
  // graphql-ws has already registered this one in ctx.subscriptions.
  if (Object.keys(ctx.subscriptions).length > MAX_OPERATIONS_PER_SOCKET) {
    return [
      new GraphQLError(`At most ${MAX_OPERATIONS_PER_SOCKET} operations may run at once on one connection`, {
        extensions: { code: ErrorCode.TOO_MANY_SUBSCRIPTIONS },
      }),
    ];
  }
  const session = await operationSession(bridge, ctx, payload);
  if (Array.isArray(session)) return session;
  const { schema, execute, subscribe, contextFactory, parse, validate } = bridge.yoga.getEnveloped({
    ws: { session, requestId, clientAddress: ctx.extra.clientAddress },
    params: payload,
  } as ServerContext & { params: unknown });
  let document;
  try {
    // Over graphql-ws a trusted document comes as `documentId` (or the persistedQuery extension) with query "".
    document = parse(bridge.trusted.resolve(payload as typeof payload & { documentId?: unknown }) ?? payload.query);
  } catch (err) {
    return [bridge.maskAndLog(err instanceof GraphQLError ? err : new GraphQLError('Syntax error'))] as GraphQLError[];
  }
  // graphql-ws keeps the subscribe message for the operation's life (hours, for a subscription). Its
  // query text is the bulk of it and is read by nothing after this parse (Yoga's cache shares the document).
  (payload as { query: string }).query = '';
  // Validation errors are logged by the validate hook; here they only get their codes.
  const errors = validate(schema, document);
  if (errors.length > 0) return errors.map(mask) as GraphQLError[];
  const contextValue = await contextFactory();
  if (getOperationAST(document, payload.operationName)?.operation === 'subscription') {
    const sender = bridge.transport().nextSender(ctx.extra.socket, id);
    if (sender) offerDirectSink(contextValue, new OperationSink(sender, contextValue as Context));
  }
  return {
    schema,
    document,
    operationName: payload.operationName,
    variableValues: payload.variables,
    contextValue,
    rootValue: { execute, subscribe },
  };
}

export function attachWebSockets(
  svc: Services,
  yoga: ParleyYoga,
  httpServer: Server,
  trusted: TrustedDocuments,
  live: LiveConnectionsPerAddress,
): WebSocketBridge {
  const wss = liveSocketServer(svc, yoga, httpServer, live);
  const maskAndLog = maskError(svc.logger);
  const tokens = new TokenWatch(svc.revocations, {
    revoked: (socket) => socket.close(WS_CLOSE.UNAUTHORIZED, 'Unauthorized: token revoked'),
    expired: (socket) => socket.close(WS_CLOSE.TOKEN_EXPIRED, 'Token expired: refresh it and reconnect'),
  });
  // An operation that throws (rather than returning errors) fails alone, with an error for its id.
  const run = (args: ExecutionArgs, phase: 'execute' | 'subscribe') =>
    inOperationScope(args, async () => {
      try {
        return await (args.rootValue as Record<typeof phase, (a: ExecutionArgs) => unknown>)[phase](args);
      } catch (err) {
        return { errors: [maskAndLog(err)] };
      }
    });
  const bridge: Bridge = { svc, yoga, trusted, tokens, maskAndLog, transport: () => transport };
  const transport: Transport = serveGraphqlWs<SocketExtra>(
    wss,
    {
      // Run inside the operation's request scope, so its log lines carry its id.
      execute: (args) => run(args, 'execute') as never,
      subscribe: (args) => run(args, 'subscribe') as never,
      onConnect: (ctx) => connect(svc, tokens, ctx as SocketContext),
      onSubscribe: (ctx, id, payload) => {
        // Each operation is a request of its own: its id extends the connection's.
        ctx.extra.operations += 1;
        const requestId = `${ctx.extra.connectionId}.${ctx.extra.operations}`;
        return runInRequestScope({ requestId }, async () => {
          try {
            return await prepareOperation(bridge, ctx as SocketContext, id, payload, requestId);
          } catch (err) {
            return [maskAndLog(err)] as GraphQLError[];
          }
        });
      },
    },
    {
      logger: svc.logger,
      maxBufferedBytes: svc.config.wsMaxBufferedBytes,
      onSlowConsumer: () => svc.metrics.slowConsumerClosed(),
      closed: (extra) => tokens.forget(extra),
      extra: (request) => ({
        watchedJtis: [],
        connectionId: requestIdFor(request, svc.config.trustProxy),
        clientAddress: clientAddress(request, svc.config.trustProxy),
        operations: 0,
      }),
    },
  );
  return {
    async dispose() {
      tokens.stop();
      await transport.dispose();
    },
  };
}
