/**
 * Resumable room feeds: roomEvents(after: cursor) replays what was posted
 * after the cursor from storage, then goes on live, with nothing missed or
 * repeated at the seam; over graphql-ws and SSE across two instances, with
 * the subscriber's socket killed in the middle of a stream of posts. A
 * cursor of the last half minute resumes a little before it (a message
 * posted on the other instance may arrive after a newer one): the client
 * keys messages by id, and never misses one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { HistoryDocument, PostMessageDocument, ResumableRoomEventsDocument } from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { codes, gqlOk } from '../../testkit/http.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { post, roomWith } from '../../testkit/data/rooms.js';
import { roomFeed, type Feed } from '../../testkit/feeds.js';
import { subscribe, wsClient } from '../../testkit/ws.js';
import { sseSubscribe } from '../../testkit/sse.js';
import { eventually } from '../../testkit/poll.js';
import { onNextStatement } from '../../testkit/faults/statement-faults.js';
import { roomChannel } from '../../../src/resolvers/rooms/live/feed.js';

let a: App;
let b: App;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  [alice, bob] = await Promise.all([signUp(a), signUp(a)]);
});

type Received = { id: string; cursor: string };

/** Reads MessagePosted events off a feed until `stop` says so. */
async function readMessages(feed: Feed<unknown>, into: Received[], stop: () => boolean) {
  while (!stop()) {
    const event = ((await feed.data(20_000)) as { roomEvents: { __typename: string; cursor?: string; message?: { id: string } } }).roomEvents;
    if (event.__typename === 'MessagePosted') into.push({ id: event.message!.id, cursor: event.cursor! });
  }
}

/** The ids in the order first received, each once: what a client keying messages by id shows. */
const distinct = (ids: string[]) => [...new Set(ids)];

/** The room's messages so far (its joins): a resumed feed may repeat them too. */
async function messagesIn(room: string): Promise<Set<string>> {
  const page = (await gqlOk(a, HistoryDocument, { roomName: room, first: 50 }, alice.token)).room!.messages;
  return new Set(page.edges.map((e) => e.node.id));
}

describe('roomEvents(after:)', () => {
  it('resumes on the other instance after the socket dies mid-stream: 500 posts, none missed, in order', async () => {
    const room = await roomWith(a, alice, [bob]);
    const setup = await messagesIn(room);
    const first = await roomFeed(a, bob.token, ResumableRoomEventsDocument, { roomName: room });

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
    await posting;
    await readMessages(second as Feed<unknown>, after, () => after.at(-1)?.id === posted.at(-1));

    // Keyed by id, the feed is every post once, in order; the rest are repeats, of posts or of the room's joins.
    const ids = [...before, ...after].map((r) => r.id);
    expect(distinct(ids).filter((id) => !setup.has(id))).toEqual(posted);
    expect(new Set(after.map((r) => r.id)).size).toBe(after.length);
    // And nothing more comes after the last one: a barrier post is the very next event.
    const barrier = await post(a, alice, room, 'barrier');
    const next: Received[] = [];
    await readMessages(second as Feed<unknown>, next, () => next.length > 0);
    expect(next.map((r) => r.id)).toEqual([barrier.id]);
  });

  it('replays from the last event received while posts race the subscription’s start: none missed, none twice (10 rounds)', async () => {
    const room = await roomWith(a, alice, [bob]);
    const earlier = await messagesIn(room);
    let cursor = (await (async () => {
      const feed = await roomFeed(a, bob.token, ResumableRoomEventsDocument, { roomName: room });
      const m = await post(a, alice, room, 'start');
      earlier.add(m.id);
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
      const sent = new Set((await racing).map((m) => m.id));
      const got: string[] = [];
      // Posts made on the other instance reach this subscriber through Redis, in arrival order, not history's;
      // the next round resumes from whatever came last, as a client does.
      while (![...sent].every((id) => got.includes(id))) {
        const result = await sub.next(20_000);
        const event = result.data?.roomEvents;
        expect(result.errors).toBeUndefined();
        if (event?.__typename !== 'MessagePosted') continue;
        got.push(event.message.id);
        cursor = event.cursor;
      }
      expect(new Set(got).size).toBe(got.length);
      // Anything beyond this round's posts is a repeat of an earlier one.
      expect(got.filter((id) => !sent.has(id) && !earlier.has(id))).toEqual([]);
      for (const id of sent) earlier.add(id);
      await client.dispose();
    }
  });

  it('never skips a message that reached the feed after a newer one: posted on the other instance, written slowly', async () => {
    const room = await roomWith(a, alice, [bob]);
    const setup = await messagesIn(room);
    const first = await roomFeed(a, bob.token, ResumableRoomEventsDocument, { roomName: room });
    // On b, the next message write waits until released: its id is made, the write not yet done.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const writing = onNextStatement(b, /INSERT INTO chat_room_messages/, () => held);
    const slow = post(b, alice, room, 'older, written slowly');
    await eventually(() => writing.fired(), { what: 'the slow write to be under way' });
    const newer = await post(a, alice, room, 'newer, written at once');
    const got: Received[] = [];
    await readMessages(first as Feed<unknown>, got, () => got.length > 0);
    expect(got.map((r) => r.id)).toEqual([newer.id]);
    // The subscriber goes away with the newer message's cursor; the older one then lands.
    first.client.terminate();
    release();
    const older = await slow;

    const second = await roomFeed(a, bob.token, ResumableRoomEventsDocument, { roomName: room, after: got[0]!.cursor });
    const after: Received[] = [];
    await readMessages(second as Feed<unknown>, after, () => [older.id, newer.id].every((id) => after.some((r) => r.id === id)));
    // In history order: the older one, then (a repeat) the newer one; before them, repeats of the room's joins.
    expect(after.map((r) => r.id).filter((id) => !setup.has(id))).toEqual([older.id, newer.id]);
  });

  it('over SSE: each event carries its cursor as its id, and Last-Event-ID resumes on the other instance', async () => {
    const room = await roomWith(a, alice, [bob]);
    const setup = await messagesIn(room);
    const first = await sseSubscribe(a, ResumableRoomEventsDocument, { roomName: room }, bob.token);
    await eventually(() => a.services.pubsub.listeners(roomChannel(room)) > 0, { what: 'the SSE feed to be live' });
    const posted: string[] = [];
    for (let i = 0; i < 30; i++) posted.push((await post(i % 2 ? a : b, alice, room, `s${i}`)).id);
    const before: string[] = [];
    let lastCursor: string | undefined;
    while (before.length < 10) {
      const event = (await first.next()).data!.roomEvents;
      if (event.__typename !== 'MessagePosted') continue;
      before.push(event.message.id);
      lastCursor = event.cursor;
    }
    first.close();
    // The SSE id of the last event read is that event's cursor (the only events here that select one).
    const lastEventId = first.lastEventId()!;
    expect(lastEventId).toBe(lastCursor);
    const second = await sseSubscribe(b, ResumableRoomEventsDocument, { roomName: room }, bob.token, { 'last-event-id': lastEventId });
    const after: string[] = [];
    while (after.at(-1) !== posted.at(-1)) {
      const event = (await second.next()).data!.roomEvents;
      if (event.__typename === 'MessagePosted') after.push(event.message.id);
    }
    // Keyed by id, every post once, in order (the resumed feed starts a little before the last id: repeats).
    expect(distinct([...before, ...after]).filter((id) => !setup.has(id))).toEqual(posted);
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
