/**
 * Resumable room feeds: roomEvents(after: cursor) replays what was posted
 * after the cursor from storage, then goes on live, with nothing missed or
 * repeated at the seam; over graphql-ws across two instances, with the
 * subscriber's socket killed in the middle of a stream of posts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { PostMessageDocument, ResumableRoomEventsDocument } from './generated/graphql.js';
import { startApp } from './testkit/app.js';
import { codes, gqlOk } from './testkit/http.js';
import { signUp, type TestUser } from './testkit/users.js';
import { post, roomWith } from './testkit/rooms.js';
import { roomFeed, type Feed } from './testkit/feeds.js';
import { subscribe, wsClient } from './testkit/ws.js';
import { sseSubscribe } from './testkit/sse.js';
import { eventually } from './testkit/poll.js';
import { roomChannel } from '../src/resolvers/rooms/feed.js';

let a: App;
let b: App;
let alice: TestUser;
let bob: TestUser;
const feeds: Feed<unknown>[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  [alice, bob] = await Promise.all([signUp(a), signUp(a)]);
});

afterAll(async () => {
  await Promise.all(feeds.map((f) => f.client.dispose()));
});

type Received = { id: string; cursor: string };

/** Reads MessagePosted events off a feed until `stop` says so. */
async function readMessages(feed: Feed<unknown>, into: Received[], stop: () => boolean) {
  while (!stop()) {
    const event = ((await feed.data(20_000)) as { roomEvents: { __typename: string; cursor?: string; message?: { id: string } } }).roomEvents;
    if (event.__typename === 'MessagePosted') into.push({ id: event.message!.id, cursor: event.cursor! });
  }
}

/** A message id's place in history, as a string that sorts like it: its timeuuid's time (time_hi, time_mid, time_low), then the rest. */
function historyPlace(id: string): string {
  const uuid = Buffer.from(id, 'base64url').toString().split('|')[3]!;
  return uuid.slice(15, 18) + uuid.slice(9, 13) + uuid.slice(0, 8) + uuid.slice(19);
}

describe('roomEvents(after:)', () => {
  it('resumes on the other instance after the socket dies mid-stream: 500 posts, each exactly once, in order', async () => {
    const room = await roomWith(a, alice, [bob]);
    const first = await roomFeed(a, bob.token, ResumableRoomEventsDocument, { roomName: room });
    feeds.push(first as Feed<unknown>);

    // The poster never stops while the subscriber dies and comes back.
    const posted: string[] = [];
    const posting = (async () => {
      for (let i = 0; i < 500; i++) posted.push((await gqlOk(i % 2 ? a : b, PostMessageDocument, { roomName: room, content: `m${i}` }, alice.token)).postMessage.id);
    })();

    const before: Received[] = [];
    await readMessages(first as Feed<unknown>, before, () => before.length >= 150);
    // Killed, not closed: no complete message, no goodbye.
    first.client.terminate();
    const resumeFrom = before.at(-1)!.cursor;

    const after: Received[] = [];
    const second = await roomFeed(b, bob.token, ResumableRoomEventsDocument, { roomName: room, after: resumeFrom });
    feeds.push(second as Feed<unknown>);
    await posting;
    await readMessages(second as Feed<unknown>, after, () => before.length + after.length >= 500 || after.at(-1)?.id === posted.at(-1));

    const seen = [...before, ...after].map((r) => r.id);
    expect(seen).toHaveLength(500);
    expect(new Set(seen).size).toBe(500);
    expect(seen).toEqual(posted);
    // And nothing more comes after the last one: a barrier post is the very next event.
    const barrier = await post(a, alice, room, 'barrier');
    const next: Received[] = [];
    await readMessages(second as Feed<unknown>, next, () => next.length > 0);
    expect(next.map((r) => r.id)).toEqual([barrier.id]);
  });

  it('replays from a cursor while posts race the subscription’s start, with no gap or repeat at the seam (10 rounds)', async () => {
    const room = await roomWith(a, alice, [bob]);
    let cursor = (await (async () => {
      const feed = await roomFeed(a, bob.token, ResumableRoomEventsDocument, { roomName: room });
      feeds.push(feed as Feed<unknown>);
      const m = await post(a, alice, room, 'start');
      const got: Received[] = [];
      await readMessages(feed as Feed<unknown>, got, () => got.length > 0);
      expect(got[0]!.id).toBe(m.id);
      feed.client.terminate();
      return got[0]!.cursor;
    })())!;
    for (let round = 0; round < 10; round++) {
      // Posts in flight on both instances while the subscription starts on one of them.
      const racing = Promise.all(Array.from({ length: 6 }, (_, i) => post(i % 2 ? a : b, alice, room, `r${round}.${i}`)));
      const client = wsClient(round % 2 ? a : b, bob.token);
      const sub = subscribe(client, ResumableRoomEventsDocument, { roomName: room, after: cursor });
      const sent = await racing;
      const got: string[] = [];
      // Posts made on the other instance reach this subscriber through Redis, so live events from the two
      // instances interleave in arrival order: the next round resumes from the newest message in history.
      let newest: { place: string; cursor: string } | undefined;
      for (;;) {
        const result = await sub.next(20_000);
        const event = result.data?.roomEvents;
        expect(result.errors).toBeUndefined();
        if (event?.__typename !== 'MessagePosted') continue;
        got.push(event.message.id);
        const place = historyPlace(event.message.id);
        if (!newest || place > newest.place) newest = { place, cursor: event.cursor };
        if (got.length >= sent.length) break;
      }
      cursor = newest!.cursor;
      // Concurrent posts commit in any order; the feed gives each once, in history order.
      expect([...got].sort()).toEqual(sent.map((m) => m.id).sort());
      expect(new Set(got).size).toBe(got.length);
      await client.dispose();
    }
  });

  it('over SSE: each event carries its cursor as its id, and Last-Event-ID resumes on the other instance', async () => {
    const room = await roomWith(a, alice, [bob]);
    const first = await sseSubscribe(a, ResumableRoomEventsDocument, { roomName: room }, bob.token);
    await eventually(() => a.services.pubsub.listeners(roomChannel(room)) > 0, { what: 'the SSE feed to be live' });
    const posted: string[] = [];
    for (let i = 0; i < 30; i++) posted.push((await post(i % 2 ? a : b, alice, room, `s${i}`)).id);
    const before: string[] = [];
    while (before.length < 10) {
      const event = (await first.next()).data!.roomEvents;
      if (event.__typename === 'MessagePosted') before.push(event.message.id);
    }
    first.close();
    const lastEventId = first.lastEventId()!;
    expect(lastEventId).toBeTruthy();
    const second = await sseSubscribe(b, ResumableRoomEventsDocument, { roomName: room }, bob.token, { 'last-event-id': lastEventId });
    const after: string[] = [];
    while (after.length < 20) {
      const event = (await second.next()).data!.roomEvents;
      if (event.__typename === 'MessagePosted') after.push(event.message.id);
    }
    expect([...before, ...after]).toEqual(posted);
    second.close();
  });

  it('refuses a cursor that is not one', async () => {
    const room = await roomWith(a, alice, [bob]);
    const client = wsClient(a, bob.token);
    const sub = subscribe(client, ResumableRoomEventsDocument, { roomName: room, after: 'not-a-cursor' });
    const result = await sub.next();
    expect(codes(result as { errors?: never })).toEqual(['BAD_USER_INPUT']);
    await client.dispose();
  });
});
