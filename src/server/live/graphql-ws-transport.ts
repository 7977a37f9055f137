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
 *
 * And a `next` payload sent to many sockets is serialized once (SharedFrames):
 * its onNext and message replacer are the transport's own.
 */
import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import type { ExecutionResult } from 'graphql';
import { SharedFrames, type PayloadJson } from './shared-frames.js';
import { TurnWrites } from './turn-writes.js';

/** Message types a client may send; the rest of the protocol's types are the server's. */
const CLIENT_MESSAGE_TYPES: ReadonlySet<string> = new Set(['connection_init', 'ping', 'pong', 'subscribe', 'complete']);

/** How long a socket closed for falling behind may take to go before it is cut. */
const SLOW_CLOSE_GRACE_MS = 1_000;

export const SLOW_CONSUMER_CLOSE = 4413;

export interface TransportOptions<E> {
  logger: Logger;
  /** Unsent bytes one socket may hold before it is closed with SLOW_CONSUMER_CLOSE. */
  maxBufferedBytes: number;
  /** Ping interval; a socket that has not answered a ping by the next one is cut. */
  keepAliveMs?: number;
  onSlowConsumer?: (bufferedBytes: number) => void;
  /**
   * What graphql-ws's ctx.extra holds besides the socket, read from the
   * upgrade request once: the request itself (headers and all) is not kept
   * for the connection's life.
   */
  extra: (request: IncomingMessage) => E;
  /** Called once a socket has closed, with its extra. */
  closed?: (extra: E & Extra) => void;
}

export interface Extra {
  socket: WebSocket;
}

export interface Transport {
  /** Closes every socket with 1001 and stops accepting new ones. */
  dispose(): Promise<void>;
  /** Writes `next` frames of operation `id` on `socket` without graphql-ws's loop (src/server/live/shared-execution.ts). */
  nextSender(socket: WebSocket, id: string): NextSender | undefined;
}

/**
 * One operation's `next` frames, written as graphql-ws would write them, under
 * the same rules as every frame: each result's whole WebSocket frame is made
 * once for every socket whose operation has the same id (SharedFrames).
 */
export class NextSender {
  private readonly prefix: string;

  constructor(
    private readonly connection: Connection<unknown>,
    id: string,
  ) {
    this.prefix = SharedFrames.nextFramePrefix(id);
  }

  send(result: ExecutionResult): void {
    this.connection.sendNext(this.prefix, this.connection.frames.payloadOf(result)!);
  }
}

export function serveGraphqlWs<E extends Record<PropertyKey, unknown>>(
  wss: WebSocketServer,
  options: Omit<ServerOptions<Record<string, unknown>, E & Extra>, 'onNext' | 'jsonMessageReplacer'>,
  transport: TransportOptions<E>,
): Transport {
  const frames = new SharedFrames();
  const writes = new TurnWrites();
  const server = makeServer({
    ...options,
    onNext: (_ctx, _id, _payload, _args, result) => frames.payloadOf(result) as never,
    jsonMessageReplacer: frames.replacer,
  });
  const { logger, keepAliveMs = 12_000 } = transport;
  wss.options.handleProtocols = handleProtocols;
  wss.on('error', (err) => logger.error({ err }, 'WebSocket server error'));

  // Each socket's state is a Connection; its listeners are these functions, shared by every socket
  // (ws calls them with the socket as `this`), rather than closures made per socket.
  const connections = new WeakMap<WebSocket, Connection<E>>();
  const unanswered = new Set<WebSocket>();
  // ws reports a client's oversized or malformed frame as a socket error and closes it itself (1009, 1002).
  const onError = (err: Error) => logger.info({ err: err.message }, 'WebSocket client error');
  function onMessage(this: WebSocket, raw: RawData) {
    connections.get(this)?.receive(String(raw));
  }
  function onPong(this: WebSocket) {
    unanswered.delete(this);
  }
  function onClose(this: WebSocket, code: number, reason: Buffer) {
    unanswered.delete(this);
    connections.get(this)?.ended(code, String(reason));
    connections.delete(this);
  }
  // Told how each send went: one function for every frame of every socket, not a closure per frame.
  const sent = (err?: Error | null) => err && logger.debug({ err: err.message }, 'WebSocket send failed');
  // One timer pings every socket; one that has not answered the previous ping by now is cut.
  const keepAlive = setInterval(() => {
    for (const socket of wss.clients) {
      if (socket.readyState !== socket.OPEN) continue;
      if (unanswered.has(socket)) {
        socket.terminate();
        continue;
      }
      unanswered.add(socket);
      socket.ping();
    }
  }, keepAliveMs).unref();

  wss.on('connection', (socket, request) => {
    socket.on('error', onError);
    socket.on('message', onMessage);
    socket.on('pong', onPong);
    socket.on('close', onClose);
    const connection = new Connection(socket, transport, frames, writes, sent, { socket, ...transport.extra(request) } as E & Extra);
    connections.set(socket, connection);
    connection.closed = server.opened(connection, connection.extra);
  });

  return {
    nextSender(socket, id) {
      const connection = connections.get(socket);
      return connection && new NextSender(connection as Connection<unknown>, id);
    },
    async dispose() {
      clearInterval(keepAlive);
      for (const client of wss.clients) client.close(1001, 'Server shutting down');
      await new Promise<void>((resolve, reject) => wss.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

/** One socket as graphql-ws drives it (protocol, send, close, onMessage), with the rules above. */
class Connection<E> {
  readonly protocol: string;
  /**
   * The TCP socket under the WebSocket, where frames made whole beforehand are
   * written as they are: one write of bytes already encoded and framed, where
   * ws.send encodes the text, frames it and writes both parts, for every socket
   * alike. Only without extensions (no compression negotiated: frames go out
   * as they are made, and ws queues nothing of its own), else undefined.
   */
  private readonly wire: Writable | undefined;
  /** graphql-ws's handler of this socket's messages, and what to call once the socket has closed. */
  private handle: ((data: string) => Promise<void>) | undefined;
  closed: ((code: number, reason: string) => Promise<void>) | undefined;
  private slowTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly transport: TransportOptions<E>,
    readonly frames: SharedFrames,
    private readonly writes: TurnWrites,
    private readonly sent: (err?: Error | null) => void,
    readonly extra: E & Extra,
  ) {
    this.protocol = socket.protocol;
    const tcp = (socket as unknown as { _socket?: unknown })._socket;
    this.wire = socket.extensions === '' && tcp instanceof Writable ? tcp : undefined;
  }

  /** Not async: graphql-ws awaits it per frame, and a plain return costs no promise. */
  send(data: string): void {
    // First, whatever happens next: the message's payload pends from its stringify until here.
    this.sendFrame(this.frames.frame(data));
  }

  /** A frame of `bytes` UTF-8 bytes as it goes on the wire, unless the socket is closing or past its unsent-bytes bound (then closed). */
  sendFrame(frame: string, bytes = Buffer.byteLength(frame)): void {
    const { socket, transport } = this;
    if (socket.readyState !== socket.OPEN || this.slowTimer) return;
    if (socket.bufferedAmount + bytes > transport.maxBufferedBytes) return this.closeSlow();
    socket.send(frame, this.sent);
  }

  /** A `next` message of `payload` after `prefix` (SharedFrames.nextFramePrefix), under sendFrame's rules. */
  sendNext(prefix: string, payload: PayloadJson): void {
    const { socket, transport, wire } = this;
    if (!wire) return this.sendFrame(`${prefix}${payload.text}}`);
    if (socket.readyState !== socket.OPEN || this.slowTimer) return;
    const frame = payload.frameFor(prefix);
    if (socket.bufferedAmount + frame.length > transport.maxBufferedBytes) return this.closeSlow();
    this.writes.write(wire, frame);
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  onMessage(handle: (data: string) => Promise<void>): void {
    this.handle = handle;
  }

  receive(data: string): void {
    const type = messageType(data);
    if (type !== undefined && !CLIENT_MESSAGE_TYPES.has(type)) {
      this.socket.close(CloseCode.BadRequest, `Bad request: clients do not send "${type}" messages`.slice(0, 120));
      return;
    }
    // Not awaited: handling a subscribe message lasts as long as its subscription.
    this.handle?.(data).catch((err: unknown) => {
      this.transport.logger.error({ err }, 'graphql-ws message handling failed');
      this.socket.close(CloseCode.InternalServerError, 'Internal server error');
    });
  }

  ended(code: number, reason: string): void {
    clearTimeout(this.slowTimer);
    this.transport.closed?.(this.extra);
    void this.closed?.(code, reason);
  }

  private closeSlow(): void {
    const { socket, transport } = this;
    transport.onSlowConsumer?.(socket.bufferedAmount);
    transport.logger.warn({ bufferedBytes: socket.bufferedAmount }, 'WebSocket closed: its client fell too far behind');
    socket.close(SLOW_CONSUMER_CLOSE, 'Too far behind: reconnect and catch up');
    this.slowTimer = setTimeout(() => socket.terminate(), SLOW_CLOSE_GRACE_MS);
  }
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
