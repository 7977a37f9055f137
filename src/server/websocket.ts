/**
 * graphql-ws on the same port and path as HTTP: each operation runs through
 * the same Yoga pipeline (limits, masking, context) as an HTTP request.
 */
import type { Server } from 'node:http';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Services } from '../services.js';
import type { Session } from '../auth/tokens.js';
import { authenticate, bearerToken } from '../auth/authenticate.js';
import { ErrorCode } from '../errors.js';
import { atTime } from '../at-time.js';
import { MAX_REQUEST_BYTES, type ServerContext } from './server-context.js';
import type { ParleyYoga } from './yoga.js';

/** Subscriptions (and in-flight operations) one WebSocket may hold at once. */
export const MAX_OPERATIONS_PER_SOCKET = 100;

/** WebSocket close codes a client can act on. */
export const WS_CLOSE = {
  UNAUTHORIZED: 4401, // invalid, expired or revoked token
  GOING_AWAY: 1001, // server shutting down: reconnect elsewhere
} as const;

export interface WebSocketBridge {
  /** Closes every socket with 1001 and stops accepting new ones. */
  dispose(): Promise<void>;
}

export function attachWebSockets(svc: Services, yoga: ParleyYoga, httpServer: Server): WebSocketBridge {
  const wss = new WebSocketServer({ server: httpServer, path: yoga.graphqlEndpoint, maxPayload: MAX_REQUEST_BYTES });
  wss.on('connection', (socket) => svc.metrics.trackWebSocket(socket));
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
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
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
        const errors = validate(schema, document);
        if (errors.length > 0) return errors;
        return {
          schema,
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
  return {
    async dispose() {
      unwatch();
      for (const client of wss.clients) client.close(WS_CLOSE.GOING_AWAY, 'Server shutting down');
      await wsServer.dispose();
    },
  };
}
