/**
 * The floor for live fan-out: a minimal WebSocket relay. Each process
 * subscribes to one channel of the run's event bus (kit/fanout/bus.ts) and sends every payload published there to
 * each of its sockets as a graphql-ws `next` frame, byte for byte the frame
 * Parley sends for the same event. Nothing else: no GraphQL execution, no
 * token check, no access re-check, no per-subscription queue. What Parley
 * spends above this is the price of its layers. Run as a child process by
 * startRelayProcess (two of them, as Parley runs two instances).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import { encodeMessageId } from '../../../src/resolvers/rooms/ids.js';
import { newTimeUuid } from '../../../src/timeuuids.js';
import { dayBucket } from '../../../src/buckets.js';
import { startChildServer, type ServerProcess } from '../servers/server-process.js';
import { relaySubscriber, type FanoutBus } from './bus.js';

/** The same bound Parley puts on one socket's unsent bytes (WS_MAX_BUFFERED_BYTES's default), with the same 4413. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export function startRelayProcess(bus: FanoutBus, channel: string): Promise<ServerProcess> {
  return startChildServer(fileURLToPath(import.meta.url), { PARLEY_RELAY_CHILD: '1', ...bus.relayEnv, RELAY_CHANNEL: channel });
}

/**
 * The `payload` of Parley's `next` frame for a MessagePosted event under the
 * fan-out subscription ({ __typename ... on MessagePosted { message { id content } } }),
 * with a message id made as Parley makes one (so the clients' order check reads it alike).
 */
export function relayPayload(roomName: string, content: string): string {
  const id = newTimeUuid(new Date());
  const messageId = encodeMessageId({ roomName, bucket: dayBucket(id.getDate()), messageId: id.toString() });
  return JSON.stringify({ data: { roomEvents: { __typename: 'MessagePosted', message: { id: messageId, content } } } });
}

if (process.env.PARLEY_RELAY_CHILD) {
  const channel = process.env.RELAY_CHANNEL!;
  /** Each socket's subscription ids (graphql-ws lets a client choose them). */
  const subscribed = new Map<WebSocket, string[]>();
  const http = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: http, path: '/graphql' });
  wss.on('connection', (socket) => {
    socket.on('error', () => {});
    socket.on('message', (raw) => {
      // Only the handshake and subscribe arrive here: rare, so JSON.parse is fine.
      const msg = JSON.parse(String(raw)) as { type: string; id?: string };
      if (msg.type === 'connection_init') socket.send('{"type":"connection_ack"}');
      else if (msg.type === 'subscribe' && msg.id) subscribed.set(socket, [...(subscribed.get(socket) ?? []), msg.id]);
      else if (msg.type === 'complete') subscribed.set(socket, (subscribed.get(socket) ?? []).filter((id) => id !== msg.id));
      else if (msg.type === 'ping') socket.send('{"type":"pong"}');
    });
    socket.once('close', () => subscribed.delete(socket));
  });
  const unsubscribe = await relaySubscriber(channel, (payload) => {
    for (const [socket, ids] of subscribed) {
      for (const id of ids) {
        // graphql-ws writes { id, type, payload } in this order; so does this.
        const frame = `{"id":${JSON.stringify(id)},"type":"next","payload":${payload}}`;
        if (socket.bufferedAmount + frame.length > MAX_BUFFERED_BYTES) {
          socket.close(4413, 'Too far behind');
          break;
        }
        socket.send(frame);
      }
    }
  });
  http.listen(0, '127.0.0.1', () => process.stdout.write(`READY http://127.0.0.1:${(http.address() as AddressInfo).port}\n`));
  process.once('SIGTERM', () => {
    for (const socket of wss.clients) socket.terminate();
    unsubscribe();
    http.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 2_000).unref();
  });
}
