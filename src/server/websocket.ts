/**
 * graphql-ws on the same port and path as HTTP: each operation runs through
 * the same Yoga pipeline (limits, masking, context) as an HTTP request.
 */
import type { IncomingMessage, Server } from 'node:http';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import { serveGraphqlWs, SLOW_CONSUMER_CLOSE } from './graphql-ws-transport.js';
import type { Services } from '../services.js';
import type { Session } from '../auth/tokens.js';
import { authenticate, bearerToken, refusalOf, revokedToken, TokenRefusal } from '../auth/authenticate.js';
import { ErrorCode } from '../errors.js';
import { atTime } from '../at-time.js';
import { MAX_REQUEST_BYTES, type ServerContext } from './server-context.js';
import type { ParleyYoga } from './yoga.js';
import type { TrustedDocuments } from './trusted-documents.js';
import type { Context } from '../context.js';
import { mask, maskError } from './error-masking.js';
import { allowsUpgrade, originPolicy } from './cors.js';
import { requestIdFor } from './request-id.js';
import { runInRequestScope } from './request-scope.js';

/** Subscriptions (and in-flight operations) one WebSocket may hold at once. */
export const MAX_OPERATIONS_PER_SOCKET = 100;

/** WebSocket close codes a client can act on (the README lists them with what a client does). */
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

type SocketExtra = {
  /** The session the connection authenticated with (connectionParams), or null. */
  wsSession?: Session | null;
  /** Tokens (by jti) whose revocation or expiry closes this socket. */
  watchedJtis?: Set<string>;
  /** The connection's id (a trusted proxy's x-request-id on the upgrade, or a new one); operations extend it. */
  connectionId?: string;
  operations?: number;
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

export interface WebSocketBridge {
  /** Closes every socket with 1001 and stops accepting new ones. */
  dispose(): Promise<void>;
}

export function attachWebSockets(
  svc: Services,
  yoga: ParleyYoga,
  httpServer: Server,
  trusted: TrustedDocuments,
): WebSocketBridge {
  const origins = originPolicy(svc.config);
  const wss = new WebSocketServer({
    server: httpServer,
    path: yoga.graphqlEndpoint,
    maxPayload: MAX_REQUEST_BYTES,
    // A page from a foreign origin cannot open a socket (answered 403), as it cannot make an HTTP request.
    verifyClient: ({ req }: { req: IncomingMessage }, answer: (ok: boolean, status?: number, message?: string) => void) =>
      allowsUpgrade(origins, req) ? answer(true) : answer(false, 403, 'Origin not allowed'),
  });
  wss.on('connection', (socket) => svc.metrics.trackWebSocket(socket));
  const maskAndLog = maskError(svc.logger);
  const socketsByJti = new Map<string, Set<WebSocket>>();
  const unwatch = svc.revocations.onRevoke((jti) => {
    for (const socket of socketsByJti.get(jti) ?? []) socket.close(WS_CLOSE.UNAUTHORIZED, 'Unauthorized: token revoked');
  });
  /** Closes the socket when the session's token is revoked anywhere or expires: no socket outlives its token. */
  function watchSession(socket: WebSocket, session: Session, watched: Set<string>): void {
    if (watched.has(session.jti)) return;
    watched.add(session.jti);
    const set = socketsByJti.get(session.jti) ?? new Set();
    set.add(socket);
    socketsByJti.set(session.jti, set);
    const stopTimer = atTime(session.expiresAt, () => socket.close(WS_CLOSE.TOKEN_EXPIRED, 'Token expired: refresh it and reconnect'));
    socket.once('close', () => {
      stopTimer();
      set.delete(socket);
      if (set.size === 0) socketsByJti.delete(session.jti);
    });
  }

  function closeRefused(socket: WebSocket, err: unknown): void {
    const expired = refusalOf(err) === TokenRefusal.EXPIRED;
    const reason = err instanceof GraphQLError ? err.message : 'Invalid token';
    socket.close(expired ? WS_CLOSE.TOKEN_EXPIRED : WS_CLOSE.UNAUTHORIZED, `Unauthorized: ${reason}`.slice(0, 120));
  }

  // An operation that throws (rather than returning errors) fails alone, with an error for its id.
  const run = (args: ExecutionArgs, phase: 'execute' | 'subscribe') =>
    inOperationScope(args, async () => {
      try {
        return await (args.rootValue as Record<typeof phase, (a: ExecutionArgs) => unknown>)[phase](args);
      } catch (err) {
        return { errors: [maskAndLog(err)] };
      }
    });
  const transport = serveGraphqlWs<SocketExtra>(
    wss,
    {
      // Run inside the operation's request scope, so its log lines carry its id.
      execute: (args) => run(args, 'execute') as never,
      subscribe: (args) => run(args, 'subscribe') as never,
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const token = bearerToken(params.authorization ?? params.Authorization ?? params.token);
        ctx.extra.watchedJtis = new Set();
        ctx.extra.connectionId = requestIdFor(ctx.extra.request, svc.config.trustProxy);
        ctx.extra.operations = 0;
        try {
          const session = await authenticate(svc, token);
          ctx.extra.wsSession = session;
          if (session) watchSession(ctx.extra.socket, session, ctx.extra.watchedJtis);
          return true;
        } catch (err) {
          closeRefused(ctx.extra.socket, err);
          return false;
        }
      },
      onSubscribe: (ctx, _id, payload) => {
        // Each operation is a request of its own: its id extends the connection's.
        ctx.extra.operations = (ctx.extra.operations ?? 0) + 1;
        const requestId = `${ctx.extra.connectionId}.${ctx.extra.operations}`;
        return runInRequestScope({ requestId }, async () => {
          try {
            return await prepareOperation();
          } catch (err) {
            return [maskAndLog(err)] as GraphQLError[];
          }
        });

        async function prepareOperation() {
          // Each operation holds a listener and a buffer: one socket may not hold without bound.
          // graphql-ws has already registered this one in ctx.subscriptions.
          if (Object.keys(ctx.subscriptions).length > MAX_OPERATIONS_PER_SOCKET) {
            return [
              new GraphQLError(`At most ${MAX_OPERATIONS_PER_SOCKET} operations may run at once on one connection`, {
                extensions: { code: ErrorCode.TOO_MANY_SUBSCRIPTIONS },
              }),
            ];
          }
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
            if (session) watchSession(ctx.extra.socket, session, ctx.extra.watchedJtis ?? new Set());
          }
          const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
            req: ctx.extra.request,
            ws: { session, requestId },
            params: payload,
          } as ServerContext & { params: unknown });
          let document;
          try {
            // Over graphql-ws a trusted document comes as `documentId` (or the persistedQuery extension) with query "".
            document = parse(trusted.resolve(payload as typeof payload & { documentId?: unknown }) ?? payload.query);
          } catch (err) {
            return [maskAndLog(err instanceof GraphQLError ? err : new GraphQLError('Syntax error'))] as GraphQLError[];
          }
          // Validation errors are logged by the validate hook; here they only get their codes.
          const errors = validate(schema, document);
          if (errors.length > 0) return errors.map(mask) as GraphQLError[];
          return {
            schema,
            document,
            operationName: payload.operationName,
            variableValues: payload.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          };
        }
      },
    },
    { logger: svc.logger, maxBufferedBytes: svc.config.wsMaxBufferedBytes, onSlowConsumer: () => svc.metrics.slowConsumerClosed() },
  );
  return {
    async dispose() {
      unwatch();
      await transport.dispose();
    },
  };
}
