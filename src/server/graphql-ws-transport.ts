/**
 * graphql-ws over the `ws` library: our own adapter around graphql-ws's
 * makeServer instead of its `useServer`, for three rules useServer does not keep.
 *
 * - A client's protocol mistake is 4400, not 4500: a message type only the
 *   server may send (`next`, `error`, `connection_ack`) is refused as a bad
 *   request, and only a failure of our own is an internal error (logged once).
 * - What one socket may hold is bounded in bytes: frames are sent without
 *   waiting for the client, and a socket whose unsent bytes pass
 *   maxBufferedBytes is closed with 4413 (the client reconnects and catches
 *   up), then cut if it does not take the close either. Waiting instead would
 *   pile the events up in every subscription's queue, without bound in bytes.
 * - Nothing is written with console.error: errors go to the app's logger.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';

/** Message types a client may send; the rest of the protocol's types are the server's. */
const CLIENT_MESSAGE_TYPES = new Set(['connection_init', 'ping', 'pong', 'subscribe', 'complete']);

/** How long a socket closed for falling behind may take to go before it is cut. */
const SLOW_CLOSE_GRACE_MS = 1_000;

export const SLOW_CONSUMER_CLOSE = 4413;

export interface TransportOptions {
  logger: Logger;
  /** Unsent bytes one socket may hold before it is closed with SLOW_CONSUMER_CLOSE. */
  maxBufferedBytes: number;
  /** Ping interval; a socket that does not answer within it is cut. */
  keepAliveMs?: number;
  onSlowConsumer?: (bufferedBytes: number) => void;
}

export interface Extra {
  socket: WebSocket;
  request: IncomingMessage;
}

export interface Transport {
  /** Closes every socket with 1001 and stops accepting new ones. */
  dispose(): Promise<void>;
}

export function serveGraphqlWs<E extends Record<PropertyKey, unknown>>(
  wss: WebSocketServer,
  options: ServerOptions<Record<string, unknown>, E & Extra>,
  transport: TransportOptions,
): Transport {
  const server = makeServer(options);
  const { logger, maxBufferedBytes, keepAliveMs = 12_000 } = transport;
  wss.options.handleProtocols = handleProtocols;
  wss.on('error', (err) => logger.error({ err }, 'WebSocket server error'));

  wss.on('connection', (socket, request) => {
    // ws reports a client's oversized or malformed frame as a socket error and closes it itself (1009, 1002).
    socket.on('error', (err) => logger.info({ err: err.message }, 'WebSocket client error'));
    let slowTimer: NodeJS.Timeout | undefined;
    const closeSlow = () => {
      if (slowTimer) return;
      transport.onSlowConsumer?.(socket.bufferedAmount);
      logger.warn({ bufferedBytes: socket.bufferedAmount }, 'WebSocket closed: its client fell too far behind');
      socket.close(SLOW_CONSUMER_CLOSE, 'Too far behind: reconnect and catch up');
      slowTimer = setTimeout(() => socket.terminate(), SLOW_CLOSE_GRACE_MS);
    };

    let pongWait: NodeJS.Timeout | undefined;
    const keepAlive = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), keepAliveMs);
      socket.once('pong', () => clearTimeout(pongWait));
      socket.ping();
    }, keepAliveMs);

    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: async (data) => {
          if (socket.readyState !== socket.OPEN || slowTimer) return;
          if (socket.bufferedAmount + Buffer.byteLength(data) > maxBufferedBytes) return closeSlow();
          socket.send(data, (err) => err && logger.debug({ err: err.message }, 'WebSocket send failed'));
        },
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', async (raw) => {
            const data = String(raw);
            const type = messageType(data);
            if (type !== undefined && !CLIENT_MESSAGE_TYPES.has(type)) {
              socket.close(CloseCode.BadRequest, `Bad request: clients do not send "${type}" messages`.slice(0, 120));
              return;
            }
            try {
              await handle(data);
            } catch (err) {
              logger.error({ err }, 'graphql-ws message handling failed');
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            }
          }),
      },
      { socket, request } as E & Extra,
    );

    socket.once('close', (code, reason) => {
      clearInterval(keepAlive);
      clearTimeout(pongWait);
      clearTimeout(slowTimer);
      void closed(code, String(reason));
    });
  });

  return {
    async dispose() {
      for (const client of wss.clients) client.close(1001, 'Server shutting down');
      await new Promise<void>((resolve, reject) => wss.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

/** The `type` of a message, if it is a JSON object with a string type (anything else graphql-ws refuses itself). */
function messageType(data: string): string | undefined {
  try {
    const type = (JSON.parse(data) as { type?: unknown } | null)?.type;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}
