/**
 * graphql-ws as a hostile or broken client uses it: one bad operation fails
 * alone, protocol mistakes are 4400 (never 4500), and a client that stops
 * reading is closed once it holds too many unsent bytes.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import WebSocket from 'ws';
import type { App } from '../../src/app.js';
import { WS_CLOSE } from '../../src/server/live/websocket.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';
import { print } from 'graphql';
import { ProfileUpdatedDocument, RoomEventsDocument, UpdateProfileDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { eventually } from '../testkit/poll.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { signUp } from '../testkit/data/users.js';
import { subscribe, wsClient } from '../testkit/ws.js';
import { profileChannel } from '../../src/resolvers/accounts/accounts.js';

let app: App;
beforeAll(async () => {
  app = await startApp();
});

/** A raw graphql-transport-ws socket, acknowledged, with every message it receives recorded (parsed, and as sent). */
async function rawSocket(target: App, token?: string) {
  const socket = new WebSocket(`${target.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  const received: Array<{ type: string; id?: string; payload?: unknown }> = [];
  const frames: string[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  socket.on('message', (data) => {
    frames.push(String(data));
    received.push(JSON.parse(String(data)));
  });
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} }));
  await eventually(() => received.some((m) => m.type === 'connection_ack'), { what: 'connection_ack' });
  return { socket, received, frames, closed };
}

describe('next frames', () => {
  it('are the whole message as JSON.stringify writes it, each with its id, when subscriptions share one result', async () => {
    const [alice, bob] = await Promise.all([signUp(app), signUp(app)]);
    const name = await roomWith(app, alice, [bob]);
    const sockets = [await rawSocket(app, alice.token), await rawSocket(app, bob.token)];
    const payload = { query: print(RoomEventsDocument), variables: { roomName: name } };
    sockets.forEach(({ socket }, i) => {
      for (const id of [`a${i}`, `b${i}`]) socket.send(JSON.stringify({ id, type: 'subscribe', payload }));
    });
    await eventually(() => app.services.pubsub.listeners(roomChannel(name)) === 4, { what: 'four live subscriptions' });

    const m = await post(app, alice, name, 'one result, four frames');
    const nexts = () => sockets.flatMap((s) => s.frames.filter((f) => JSON.parse(f).type === 'next'));
    await eventually(() => nexts().length === 4, { what: 'a frame for each subscription' });
    for (const frame of nexts()) {
      const { id, payload } = JSON.parse(frame) as { id: string; payload: unknown };
      expect(frame).toBe(JSON.stringify({ id, type: 'next', payload }));
    }
    expect(nexts().map((f) => JSON.parse(f).id).sort()).toEqual(['a0', 'a1', 'b0', 'b1']);
    expect(new Set(nexts().map((f) => JSON.stringify(JSON.parse(f).payload))).size).toBe(1);
    expect(JSON.parse(nexts()[0]!).payload.data.roomEvents).toMatchObject({ __typename: 'MessagePosted', message: { id: m.id } });
    for (const { socket } of sockets) socket.close();
  });
});

describe('one bad operation', () => {
  it('gets an error for its own id and leaves the other subscriptions of the socket running', async () => {
    const user = await signUp(app);
    const client = wsClient(app, user.token);
    const good = subscribe(client, ProfileUpdatedDocument, { login: user.login });
    await eventually(() => app.services.pubsub.listeners(profileChannel(user.login)) === 1, { what: 'subscription live' });

    const bad = await new Promise<unknown>((resolve) =>
      client.subscribe({ query: 'subscription { __typename @skip }' }, { next: () => {}, error: resolve, complete: () => resolve(null) }),
    );
    expect(bad).toMatchObject([{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]);
    // Over HTTP the same document is a validation error too.
    expect(codes(await gql(app, 'subscription { __typename @skip }'))).toEqual(['GRAPHQL_VALIDATION_FAILED']);

    await gqlOk(app, UpdateProfileDocument, { input: { bio: 'still here' } }, user.token);
    expect((await good.next()).data?.profileUpdated).toMatchObject({ login: user.login });
    good.unsubscribe();
    await client.dispose();
  });
});

describe('protocol mistakes', () => {
  for (const type of ['next', 'connection_ack', 'error']) {
    it(`closes with 4400 when a client sends "${type}"`, async () => {
      const { socket, closed } = await rawSocket(app);
      socket.send(JSON.stringify({ type, id: '1', payload: {} }));
      expect(await closed).toMatchObject({ code: WS_CLOSE.BAD_REQUEST });
    });
  }

  it('closes with 4400 for a message that is not JSON, and the server goes on', async () => {
    const { socket, closed } = await rawSocket(app);
    socket.send('{not json');
    expect((await closed).code).toBe(WS_CLOSE.BAD_REQUEST);
    expect((await gql(app, '{ __typename }')).data).toEqual({ __typename: 'Query' });
  });
});

describe('a client that stops reading', () => {
  it('is closed once its unsent bytes pass the cap, and its listeners are released', async () => {
    const capped = await startApp({ env: { WS_MAX_BUFFERED_BYTES: String(256 * 1024) } });
    const [poster, reader] = await Promise.all([signUp(capped), signUp(capped)]);
    const room = await roomWith(capped, poster, [reader]);
    const { socket, closed } = await rawSocket(capped, reader.token);
    const query = `subscription { roomEvents(roomName: "${room}") { ... on MessagePosted { message { id content } } } }`;
    for (let i = 0; i < 20; i++) socket.send(JSON.stringify({ id: String(i), type: 'subscribe', payload: { query } }));
    await eventually(() => capped.services.pubsub.listeners(roomChannel(room)) === 20, { what: '20 subscriptions live' });

    // The client stops reading: the kernel's buffers fill, then the server's.
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const content = 'x'.repeat(3000);
    const stillOpen = () => capped.services.pubsub.listeners(roomChannel(room)) > 0;
    for (let i = 0; i < 400 && stillOpen(); i++) await post(capped, poster, room, `${content} ${i}`);
    // Its 20 subscriptions are released once the server gives the socket up.
    await eventually(() => capped.services.pubsub.listeners(roomChannel(room)) === 0, { what: 'the stalled socket to be closed', timeoutMs: 20_000 });
    (socket as unknown as { _socket: { resume(): void } })._socket.resume();
    expect([WS_CLOSE.SLOW_CONSUMER, 1006]).toContain((await closed).code);
    const metrics = await (await fetch(`${capped.url}/metrics`)).text();
    expect(metrics).toMatch(/^parley_websocket_slow_consumer_closes_total 1$/m);
  });
});
