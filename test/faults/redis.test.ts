/**
 * Redis stopped and started for real (a redis-server of the test's own),
 * under two instances that share it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import {
  type MessagePageFragment,
  ConversationsDocument,
  HistoryDocument,
  InboxEventsDocument,
  LoginDocument,
  LogoutDocument,
  MeDocument,
  RoomEventsDocument,
} from '../generated/graphql.js';
import { send } from '../testkit/data/messenger.js';
import { inboxChannel } from '../../src/resolvers/messenger/events.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';
import { startApp, stopApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { eventually } from '../testkit/poll.js';
import { RedisServer } from '../testkit/faults/redis-server.js';
import { signUp } from '../testkit/data/users.js';
import { subscribe, wsClient, wsRequest } from '../testkit/ws.js';
import { WS_CLOSE } from '../../src/server/live/websocket.js';

let redis: RedisServer;
let a: App;
let b: App;
beforeAll(async () => {
  redis = await RedisServer.start();
  const env = { REDIS_URL: redis.url };
  [a, b] = await Promise.all([startApp({ redis: true, env }), startApp({ redis: true, env })]);
});
afterAll(async () => {
  await Promise.all([a, b].map((app) => stopApp(app)));
  await redis.stop();
});

const ready = async (app: App) => (await fetch(`${app.url}/ready`)).status;

/**
 * Reads a feed that goes on live after an outage until the message `afterId`: every event before it is one
 * of `typename` for a message of the outage (`during`), delivered late by the publisher's retry.
 */
async function liveUntil(next: () => Promise<{ __typename?: string } | null | undefined>, typename: string, afterId: string, during: string[]) {
  for (;;) {
    const event = await next();
    expect(event?.__typename).toBe(typename);
    const id = (event as { message: { id: string } }).message.id;
    if (id === afterId) return;
    expect(during).toContain(id);
  }
}

describe('logout while Redis is down', () => {
  it('is refused on the other instance at once, over HTTP and WebSocket, and nobody else is locked out', async () => {
    const user = await signUp(a);
    const token = (await gqlOk(b, LoginDocument, { login: user.login, password: user.password })).login.token;
    expect((await gqlOk(b, MeDocument, {}, token)).me?.login).toBe(user.login);
    const openSocket = wsClient(b, token);
    expect((await wsRequest(openSocket, MeDocument)).data?.me?.login).toBe(user.login);

    await redis.stop();
    await eventually(async () => (await ready(a)) === 503 && (await ready(b)) === 503, { what: 'both instances to see Redis down' });

    expect((await gqlOk(a, LogoutDocument, {}, token)).logout).toBe(true);
    // No waiting: B cannot have heard of it through Redis, and must not accept the token.
    // The socket opened before the logout is closed at its next operation...
    void wsRequest(openSocket, MeDocument).catch(() => undefined);
    expect((await openSocket.closed).code).toBe(WS_CLOSE.UNAUTHORIZED);
    // ...and so are new requests and sockets.
    expect(codes(await gql(b, MeDocument, {}, token))).toEqual(['UNAUTHENTICATED']);
    const fresh = wsClient(b, token);
    expect((await fresh.closed).code).toBe(WS_CLOSE.UNAUTHORIZED);
    // The user's other session still works: a check against storage, not a blanket refusal.
    expect((await gqlOk(b, MeDocument, {}, user.token)).me?.login).toBe(user.login);

    await redis.start();
    await eventually(async () => (await ready(a)) === 200 && (await ready(b)) === 200, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'both instances ready again',
    });
    expect(codes(await gql(b, MeDocument, {}, token))).toEqual(['UNAUTHENTICATED']);
    expect((await gqlOk(b, MeDocument, {}, user.token)).me?.login).toBe(user.login);
  });
});

describe('Redis restarted in the middle of a room feed', () => {
  it('tells each open subscription to catch up, and catching up finds every message posted meanwhile', async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const client = wsClient(b, reader.token);
    const feed = subscribe(client, RoomEventsDocument, { roomName: room });
    await eventually(() => b.services.pubsub.listeners(roomChannel(room)) === 1, { what: 'the feed to be live on B' });

    const live: string[] = [];
    const before = await post(a, poster, room, 'before the outage');
    const first = await feed.next();
    expect(first.data?.roomEvents).toMatchObject({ __typename: 'MessagePosted', message: { id: before.id } });
    live.push(before.id);

    await redis.stop();
    await eventually(async () => (await ready(b)) === 503, { what: 'B to see Redis down' });
    // Posts are stored while the event bus is down; their live events cannot be delivered.
    const during: string[] = [];
    for (let i = 0; i < 5; i++) during.push((await post(a, poster, room, `during the outage ${i}`)).id);

    await redis.start();
    // Some events of the outage may still arrive (the publisher retries its commands on reconnect);
    // then the notice, once this instance hears the room's channel again.
    let resumeCursor: string | undefined;
    while (!resumeCursor) {
      const event = (await feed.next(30_000)).data?.roomEvents;
      if (event?.__typename === 'FeedInterrupted') resumeCursor = event.resumeCursor;
      else if (event?.__typename === 'MessagePosted') live.push(event.message.id);
      else throw new Error(`unexpected event ${JSON.stringify(event)}`);
    }

    // Catching up from the notice's cursor finds every message of the outage, in order (one page holds them).
    const page: MessagePageFragment = (await gqlOk(b, HistoryDocument, { roomName: room, last: 200, before: resumeCursor }, reader.token))
      .room!.messages;
    const caughtUp = page.edges.map((e) => e.node.id);
    // Catch-up lists the outage's messages in order, whatever was delivered live meanwhile.
    expect(caughtUp.filter((id) => during.includes(id))).toEqual(during);

    // And the feed goes on live (a late delivery of an outage post, retried by the publisher, may come first).
    const after = await post(a, poster, room, 'after the outage');
    await liveUntil(async () => (await feed.next(15_000)).data?.roomEvents, 'MessagePosted', after.id, during);
    feed.unsubscribe();
    await client.dispose();
  });
});

describe('Redis restarted under an open inbox feed', () => {
  it('tells the subscription to re-read its inbox, where every message of the outage is counted, and goes on live', async () => {
    const [sender, owner] = await Promise.all([signUp(a), signUp(b)]);
    const client = wsClient(b, owner.token);
    const inbox = subscribe(client, InboxEventsDocument, {});
    await eventually(() => b.services.pubsub.listeners(inboxChannel(owner.login)) === 1, { what: 'the inbox feed to be live on B' });

    await redis.stop();
    await eventually(async () => (await ready(b)) === 503, { what: 'B to see Redis down' });
    const outageStarted = Date.now();
    const during = [];
    for (let i = 0; i < 3; i++) during.push(await send(a, sender, owner, `during the outage ${i}`));
    await redis.start();

    // A message of the outage may still arrive live (the publisher retries on reconnect); then the notice.
    let interruptedAt: string | undefined;
    while (!interruptedAt) {
      const event = (await inbox.next(30_000)).data?.inboxEvents;
      if (event?.__typename === 'InboxInterrupted') interruptedAt = event.interruptedAt;
      else expect(event?.__typename).toBe('DirectMessageReceived');
    }
    // From before anything was sent during the outage.
    expect(new Date(interruptedAt).getTime()).toBeLessThanOrEqual(outageStarted);
    const conversation = (await gqlOk(b, ConversationsDocument, { first: 10 }, owner.token)).conversations.edges.find(
      (e) => e.node.partner.login === sender.login,
    );
    expect(conversation?.node.unreadCount).toBe(during.length);

    const after = await send(a, sender, owner, 'after the outage');
    await liveUntil(
      async () => (await inbox.next(15_000)).data?.inboxEvents,
      'DirectMessageReceived',
      after.id,
      during.map((m) => m.id),
    );
    inbox.unsubscribe();
    await client.dispose();
  });
});
