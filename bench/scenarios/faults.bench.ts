/**
 * The figures of the fault tests, measured: what clients see during a
 * Cassandra outage and how soon the instance is ready after it, what a room
 * subscriber receives across a Redis restart, and how many bytes a stalled
 * socket is allowed to hold. Real parts only: a closable TCP proxy in front of
 * the node, a redis-server of the benchmark's own stopped and started.
 */
import WebSocket from 'ws';
import { createLogger } from '../../src/observability/logging.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';
import { HistoryDocument, LoginDocument, MeDocument, RoomEventsDocument } from '../../test/generated/graphql.js';
import { codes, gql, gqlOk } from '../../test/testkit/http.js';
import { post, roomWith } from '../../test/testkit/data/rooms.js';
import { RedisServer } from '../../test/testkit/faults/redis-server.js';
import { TcpProxy } from '../../test/testkit/faults/tcp-proxy.js';
import { signUp } from '../../test/testkit/data/users.js';
import { subscribe, wsClient } from '../../test/testkit/ws.js';
import { benchApp, benchContactPoint } from '../kit/harness.js';

const OUTAGE_MS = 20_000;

async function until(check: () => Promise<boolean> | boolean, stepMs = 20): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, stepMs));
}

async function cassandraOutage(): Promise<string[]> {
  const [host, port] = (await benchContactPoint()).split(':');
  const proxy = new TcpProxy(host!, Number(port));
  await proxy.open();
  const app = await benchApp({ env: { CASSANDRA_CONTACT_POINTS: `127.0.0.1:${proxy.port}` } });
  try {
    const user = await signUp(app);
    await proxy.close();
    const seen = new Map<string, number>();
    const stopAt = Date.now() + OUTAGE_MS;
    let requests = 0;
    while (Date.now() < stopAt) {
      // A client at 20 requests/s: half reads with a token, half logins with the right password.
      const code = String(
        (requests % 2
          ? codes(await gql(app, MeDocument, {}, user.token))[0]
          : codes(await gql(app, LoginDocument, { login: user.login, password: user.password }))[0]) ?? 'ok',
      );
      requests += 1;
      seen.set(code, (seen.get(code) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 50));
    }
    await proxy.open();
    const back = performance.now();
    await until(async () => (await fetch(`${app.url}/ready`)).status === 200);
    const readyAfter = performance.now() - back;
    const login = await gql(app, LoginDocument, { login: user.login, password: user.password });
    return [
      `### Cassandra unreachable for ${OUTAGE_MS / 1000} s (closable proxy), a client sending 20 requests/s`,
      '',
      `- requests during the outage: ${requests}; answers: ${[...seen].map(([c, n]) => `${c} ${n}`).join(', ')}`,
      `- from CQL answering again to /ready 200: ${(readyAfter / 1000).toFixed(2)} s`,
      `- first login after it: ${codes(login).length === 0 ? 'accepted' : codes(login).join(', ')}`,
    ];
  } finally {
    await app.stop();
    await proxy.close();
  }
}

async function redisRestart(): Promise<string[]> {
  const redis = await RedisServer.start();
  const env = { REDIS_URL: redis.url, REDIS_PREFIX: `bench:${Date.now()}:` };
  const [a, b] = await Promise.all([benchApp({ env }), benchApp({ env })]);
  try {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const client = wsClient(b, reader.token);
    const feed = subscribe(client, RoomEventsDocument, { roomName: room });
    await until(() => b.services.pubsub.listeners(roomChannel(room)) === 1);
    const posted: string[] = [];
    const live: string[] = [];
    let resumeCursor: string | undefined;
    const reading = (async () => {
      for (;;) {
        const event = (await feed.next(60_000)).data?.roomEvents;
        if (event?.__typename === 'MessagePosted') live.push(event.message.id);
        if (event?.__typename === 'FeedInterrupted') resumeCursor = event.resumeCursor;
        if (event?.__typename === 'MessagePosted' && event.message.content === 'last') return;
      }
    })();
    for (let i = 0; i < 20; i++) posted.push((await post(a, poster, room, `before ${i}`)).id);
    await redis.stop();
    const downAt = Date.now();
    while (Date.now() - downAt < 10_000) posted.push((await post(a, poster, room, `during ${posted.length}`)).id);
    await redis.start();
    await until(() => resumeCursor !== undefined, 50);
    for (let i = 0; i < 20; i++) posted.push((await post(a, poster, room, `after ${i}`)).id);
    posted.push((await post(a, poster, room, 'last')).id);
    await reading;
    const page = (await gqlOk(b, HistoryDocument, { roomName: room, last: 200, before: resumeCursor }, reader.token)).room!.messages;
    const replayed = page.edges.map((e) => e.node.id).filter((id) => posted.includes(id) && !live.includes(id));
    const lost = posted.filter((id) => !live.includes(id) && !replayed.includes(id));
    const order = live.every((id, i) => i === 0 || posted.indexOf(live[i - 1]!) < posted.indexOf(id));
    feed.unsubscribe();
    await client.dispose();
    return [
      '### Redis stopped for 10 s under a room feed (two instances, poster on A, subscriber on B)',
      '',
      `- messages posted: ${posted.length} (every post was stored and acknowledged)`,
      `- delivered live: ${live.length}, in posting order: ${order ? 'yes' : 'no'}`,
      `- FeedInterrupted received: yes; replayed by one catch-up page from its cursor: ${replayed.length}`,
      `- lost (neither delivered nor replayed): ${lost.length}`,
    ];
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  }
}

async function stalledSocket(): Promise<string[]> {
  const lines: string[] = [];
  const cap = 4 * 1024 * 1024;
  const app = await benchApp({ logger: createLogger({ logLevel: 'warn' }, { write: (l: string) => void lines.push(l) }) });
  try {
    const [poster, reader] = await Promise.all([signUp(app), signUp(app)]);
    const room = await roomWith(app, poster, [reader]);
    const socket = new WebSocket(`${app.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    await new Promise((r) => socket.once('open', r));
    const acknowledged = new Promise((r) => socket.once('message', r));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${reader.token}` } }));
    await acknowledged;
    const query = `subscription { roomEvents(roomName: "${room}") { ... on MessagePosted { message { id content } } } }`;
    for (let i = 0; i < 60; i++) socket.send(JSON.stringify({ id: String(i), type: 'subscribe', payload: { query } }));
    await until(() => app.services.pubsub.listeners(roomChannel(room)) === 60);
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const rssBefore = process.memoryUsage().rss;
    let posts = 0;
    const content = 'x'.repeat(3000);
    while (posts < 2000 && app.services.pubsub.listeners(roomChannel(room)) > 0) {
      await post(app, poster, room, content);
      posts += 1;
    }
    const rssPeak = process.memoryUsage().rss;
    (socket as unknown as { _socket: { resume(): void } })._socket.resume();
    const code = await closed;
    const closeLine = lines.map((l) => JSON.parse(l) as { msg: string; bufferedBytes?: number }).find((l) => l.msg.includes('fell too far behind'));
    return [
      '### A client with 60 room subscriptions stops reading; 3 KB messages are posted until the server gives it up',
      '',
      `- cap (WS_MAX_BUFFERED_BYTES): ${cap} bytes; bytes held for the socket when it was closed: ${closeLine?.bufferedBytes ?? 'n/a'}`,
      `- posts until the socket was closed: ${posts}; close code seen by the client: ${code}`,
      `- RSS of the process (server and client) grew by ${((rssPeak - rssBefore) / 1e6).toFixed(1)} MB meanwhile`,
    ];
  } finally {
    await app.stop();
  }
}

export default async function run(): Promise<string> {
  return [...(await cassandraOutage()), '', ...(await redisRestart()), '', ...(await stalledSocket())].join('\n');
}
