/**
 * Subscribers on one instance who send the same document and variables share
 * the execution of each event; what depends on the viewer, and each
 * subscriber's access, stay their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { App } from '../../src/app.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';
import { Limits } from '../../src/limits.js';
import {
  JoinRoomDocument,
  RoomEventsDocument,
  RoomPostsWithBiosAndJoinsDocument,
  RoomPostsWithBiosDocument,
  RoomPostsWithEmailsDocument,
  type RoomEventsSubscription,
} from '../generated/graphql.js';
import { ManualClock, startApp } from '../testkit/app.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { followRoom, post, roomWith } from '../testkit/data/rooms.js';
import { wsClient, type Subscription, type WsClient } from '../testkit/ws.js';
import { recordCql } from '../testkit/faults/cql-spy.js';
import { sseSubscribe } from '../testkit/sse.js';
import { eventually } from '../testkit/poll.js';
import { gqlOk } from '../testkit/http.js';

let appA: App;
let appB: App;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
const clients: WsClient[] = [];

beforeAll(async () => {
  [appA, appB] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  [alice, bob, carol] = await Promise.all([signUp(appA), signUp(appA), signUp(appA)]);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
});

/** Subscribes `user` on `app` with `document` and waits until the subscription is live there. */
async function follow<T>(app: App, user: TestUser, roomName: string, document: TypedDocumentNode<T, { roomName: string }>): Promise<Subscription<T>> {
  const client = wsClient(app, user.token);
  clients.push(client);
  return followRoom(app, client, roomName, document);
}

/** The next posted message's selection, failing on an error. */
async function nextPost<T extends { roomEvents: object }>(sub: Subscription<T>): Promise<unknown> {
  const result = await sub.next();
  if (result.errors?.length || !result.data) throw new Error(`subscription failed: ${JSON.stringify(result.errors)}`);
  return (result.data.roomEvents as { message?: unknown }).message;
}

const userReads = (spy: ReturnType<typeof recordCql>) => spy.statements().filter((s) => /\bFROM users\b/.test(s));

describe('subscribers sending the same document and variables', () => {
  it('share one execution of each event per instance', async () => {
    const name = await roomWith(appA, alice, [bob, carol]);
    const subs = [
      await follow(appB, alice, name, RoomPostsWithBiosDocument),
      await follow(appB, bob, name, RoomPostsWithBiosDocument),
      await follow(appB, carol, name, RoomPostsWithBiosDocument),
    ];
    // Each execution reads the author's row for `bio`: once on B, for all three of its subscribers.
    const spy = recordCql(appB);
    const m = await post(appA, alice, name, 'once for all');
    try {
      for (const sub of subs) expect(await nextPost(sub)).toEqual({ id: m.id, author: { login: alice.login, bio: null } });
    } finally {
      spy.stop();
    }
    expect(userReads(spy)).toHaveLength(1);
  });

  it('share it over SSE too', async () => {
    const name = await roomWith(appA, alice, [bob]);
    const streams = await Promise.all([alice, bob].map((u) => sseSubscribe(appB, RoomPostsWithBiosDocument, { roomName: name }, u.token)));
    await eventually(() => appB.services.pubsub.listeners(roomChannel(name)) === 2, { what: 'both SSE subscriptions live' });
    const spy = recordCql(appB);
    const m = await post(appA, bob, name, 'once for both streams');
    try {
      for (const stream of streams) {
        expect((await stream.next()).data?.roomEvents).toEqual({ __typename: 'MessagePosted', message: { id: m.id, author: { login: bob.login, bio: null } } });
      }
    } finally {
      spy.stop();
      for (const stream of streams) stream.close();
    }
    expect(userReads(spy)).toHaveLength(1);
  });

  it('each get their own answer from a field that reads the viewer', async () => {
    const name = await roomWith(appA, alice, [bob]);
    const alices = await follow(appB, alice, name, RoomPostsWithEmailsDocument);
    const bobs = await follow(appB, bob, name, RoomPostsWithEmailsDocument);

    const fromAlice = await post(appA, alice, name, 'my address is mine');
    expect(await nextPost(alices)).toEqual({ id: fromAlice.id, author: { login: alice.login, email: alice.email } });
    expect(await nextPost(bobs)).toEqual({ id: fromAlice.id, author: { login: alice.login, email: null } });

    const fromBob = await post(appA, bob, name, 'and mine is mine');
    expect(await nextPost(bobs)).toEqual({ id: fromBob.id, author: { login: bob.login, email: bob.email } });
    expect(await nextPost(alices)).toEqual({ id: fromBob.id, author: { login: bob.login, email: null } });
  });

  it('each keep their own access: one is cut off while the other gets the event', async () => {
    const clock = new ManualClock();
    const app = await startApp({ clock });
    const name = await roomWith(app, alice, [bob]);
    const alices = await follow<RoomEventsSubscription>(app, alice, name, RoomEventsDocument);
    const bobs = await follow<RoomEventsSubscription>(app, bob, name, RoomEventsDocument);
    // Bob leaves through the store, so no ParticipantLeft is published: only his re-check finds out.
    const { rooms } = app.services.stores;
    const room = (await rooms.byName(name))!;
    await rooms.leave(room, bob.login, room.participants.filter((p) => p.login === bob.login));
    clock.advance(Limits.room.participationRecheckMs);

    await post(app, alice, name, 'after the window');
    expect(await nextPost(alices)).toMatchObject({ content: 'after the window', author: { login: alice.login } });
    const cut = await bobs.next();
    expect(cut.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    await bobs.completed;
  });
});

describe('results written straight to the socket', () => {
  it("keep each subscriber's order while events alternate between that and the long way", async () => {
    // A post's selection reads its author's row, so its result is awaited and goes through every layer;
    // a join's is ready at once and goes straight to each socket. Both kinds, interleaved, must arrive in order.
    const name = await roomWith(appA, alice, [bob]);
    const subs = [
      await follow(appB, alice, name, RoomPostsWithBiosAndJoinsDocument),
      await follow(appB, bob, name, RoomPostsWithBiosAndJoinsDocument),
    ];
    const expected: string[] = [];
    for (let i = 0; i < 8; i++) {
      await post(appA, bob, name, `post ${i}`);
      expected.push(`MessagePosted post ${i}`);
      const joiner = await signUp(appA);
      await gqlOk(appA, JoinRoomDocument, { roomName: name }, joiner.token);
      // A join is told as ParticipantJoined, then as its system message.
      expected.push(`ParticipantJoined ${joiner.login}`, `MessagePosted ${joiner.firstname} ${joiner.lastname} joins the room`);
    }
    for (const sub of subs) {
      const seen: string[] = [];
      for (let i = 0; i < expected.length; i++) {
        const event = (await sub.next()).data!.roomEvents as { __typename: string; message?: { content: string }; user?: { login: string } };
        seen.push(`${event.__typename} ${event.message?.content ?? event.user?.login}`);
      }
      expect(seen).toEqual(expected);
    }
  });
});
