/**
 * The live room feed over graphql-ws and SSE, on one instance and across two
 * instances sharing one Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { roomChannel, type RoomEvent } from '../../../src/resolvers/rooms/live/feed.js';
import { MAX_BUFFERED_EVENTS, type Listener } from '../../../src/pubsub/pubsub.js';
import { Limits } from '../../../src/limits.js';
import {
  DeleteRoomDocument,
  HideMessageDocument,
  HistoryDocument,
  JoinRoomDocument,
  LeaveRoomDocument,
  PostMessageDocument,
  RoomEventsDocument,
  SendTypingDocument,
  type RoomEventsSubscription,
} from '../../generated/graphql.js';
import { ManualClock, startApp } from '../../testkit/app.js';
import { codes, gql, gqlAs, gqlOk } from '../../testkit/http.js';
import { eventually } from '../../testkit/poll.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { followRoom, post, roomWith } from '../../testkit/data/rooms.js';
import { subscribe, wsClient, type Subscription, type WsClient } from '../../testkit/ws.js';
import { recordCql } from '../../testkit/faults/cql-spy.js';
import { sseSubscribe } from '../../testkit/sse.js';

let appA: App;
let appB: App;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
const clients: WsClient[] = [];

beforeAll(async () => {
  [appA, appB] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  [alice, bob, carol] = await Promise.all([
    signUp(appA, { firstname: 'Alice', lastname: 'Liddell' }),
    signUp(appA, { firstname: 'Bob', lastname: 'Builder' }),
    signUp(appA, { firstname: 'Carol', lastname: 'Danvers' }),
  ]);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
});

type Event = RoomEventsSubscription['roomEvents'];

/** Subscribes `user` on `app` and waits until the subscription is live there. */
async function follow(app: App, user: TestUser, roomName: string): Promise<Subscription<RoomEventsSubscription>> {
  const client = wsClient(app, user.token);
  clients.push(client);
  return followRoom(app, client, roomName, RoomEventsDocument);
}

async function nextEvent(sub: Subscription<RoomEventsSubscription>): Promise<Event> {
  const result = await sub.next();
  if (result.errors?.length || !result.data) throw new Error(`subscription failed: ${JSON.stringify(result.errors)}`);
  return result.data.roomEvents;
}

describe('roomEvents over graphql-ws', () => {
  it('delivers posts, joins, hides and leaves in order, to participants', async () => {
    const name = await roomWith(appA, alice);
    const sub = await follow(appA, alice, name);

    await gqlOk(appA, JoinRoomDocument, { roomName: name }, bob.token);
    const m = await post(appA, bob, name, 'hello all');
    await gqlOk(appA, HideMessageDocument, { messageId: m.id }, alice.token);
    await gqlOk(appA, LeaveRoomDocument, { roomName: name }, bob.token);

    const events = [];
    for (let i = 0; i < 6; i++) events.push(await nextEvent(sub));
    expect(events.map((e) => e.__typename)).toEqual([
      'ParticipantJoined',
      'MessagePosted',
      'MessagePosted',
      'MessageHidden',
      'ParticipantLeft',
      'MessagePosted',
    ]);
    expect(events[0]).toMatchObject({ roomName: name, user: { login: bob.login, displayName: 'Bob Builder' } });
    expect(events[1]).toMatchObject({ message: { content: 'Bob Builder joins the room', systemMessage: true } });
    expect(events[2]).toMatchObject({ message: { id: m.id, content: 'hello all', author: { login: bob.login } } });
    expect(events[3]).toMatchObject({ message: { id: m.id, content: null, visible: false } });
    expect(events[4]).toMatchObject({ user: { login: bob.login } });
    expect(events[5]).toMatchObject({ message: { content: 'Bob Builder leaves the room' } });
  });

  it('refuses non-participants and unknown rooms when subscribing', async () => {
    const name = await roomWith(appA, alice);
    const client = wsClient(appA, carol.token);
    clients.push(client);
    const denied = await subscribe(client, RoomEventsDocument, { roomName: name }).next();
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const unknown = await subscribe(client, RoomEventsDocument, { roomName: `${name}-none` }).next();
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(appA.services.pubsub.listeners(roomChannel(name))).toBe(0);
  });

  it('ends the stream of a subscriber who leaves, after telling them', async () => {
    const name = await roomWith(appA, alice, [bob]);
    const bobs = await follow(appA, bob, name);
    const alices = await follow(appA, alice, name);
    await gqlOk(appA, LeaveRoomDocument, { roomName: name }, bob.token);
    expect(await nextEvent(bobs)).toMatchObject({ __typename: 'ParticipantLeft', user: { login: bob.login } });
    await bobs.completed;
    // Alice still follows the room; Bob's listener is gone.
    await post(appA, alice, name, 'after bob left');
    expect(await nextEvent(alices)).toMatchObject({ __typename: 'ParticipantLeft' });
    expect(await nextEvent(alices)).toMatchObject({ message: { content: 'Bob Builder leaves the room' } });
    expect(await nextEvent(alices)).toMatchObject({ message: { content: 'after bob left' } });
    expect(bobs.pending()).toBe(0);
    await eventually(() => appA.services.pubsub.listeners(roomChannel(name)) === 1, { what: "Bob's listener to go" });
  });

  it('completes every subscription after RoomDeleted, on both instances', async () => {
    const name = await roomWith(appA, alice, [bob]);
    const onA = await follow(appA, alice, name);
    const onB = await follow(appB, bob, name);
    await gqlOk(appA, DeleteRoomDocument, { roomName: name }, alice.token);
    for (const sub of [onA, onB]) {
      expect(await nextEvent(sub)).toMatchObject({ __typename: 'RoomDeleted', roomName: name, deletedBy: { login: alice.login } });
      await sub.completed;
    }
    await eventually(
      () => appA.services.pubsub.listeners(roomChannel(name)) + appB.services.pubsub.listeners(roomChannel(name)) === 0,
      { what: 'every listener of the deleted room to go' },
    );
  });

  it('refuses a subscriber who left while the subscription was being set up', async () => {
    const name = await roomWith(appA, alice, [bob]);
    const pubsub = appA.services.pubsub;
    const listen = pubsub.listen;
    // Bob's leave commits (and its event is published) after the first membership check, before the stream is live.
    pubsub.listen = (async (channel: string, listener: Listener<unknown>) => {
      if (channel === roomChannel(name)) {
        pubsub.listen = listen;
        expect((await gqlOk(appA, LeaveRoomDocument, { roomName: name }, bob.token)).leaveRoom).toBe(true);
      }
      return listen.call(pubsub, channel, listener);
    }) as typeof listen;
    const client = wsClient(appA, bob.token);
    clients.push(client);
    try {
      const first = await subscribe(client, RoomEventsDocument, { roomName: name }).next();
      expect(first.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    } finally {
      pubsub.listen = listen;
    }
    await eventually(() => pubsub.listeners(roomChannel(name)) === 0, { what: 'the refused listener to go' });
  });

  it('stops listening when the client unsubscribes', async () => {
    const name = await roomWith(appA, alice);
    const sub = await follow(appA, alice, name);
    sub.unsubscribe();
    await eventually(() => appA.services.pubsub.listeners(roomChannel(name)) === 0, { what: 'the listener to go' });
  });
});

describe('a subscriber who is no longer a participant', () => {
  it('is cut off with FORBIDDEN at the first event after the re-check window, even when no ParticipantLeft was published', async () => {
    const clock = new ManualClock();
    const app = await startApp({ clock });
    const name = await roomWith(app, alice, [bob]);
    const bobs = await follow(app, bob, name);
    // Bob leaves through the store: his participation and his list change, and no event is published
    // (as when the publish of his own ParticipantLeft was lost).
    const { rooms } = app.services.stores;
    const room = (await rooms.byName(name))!;
    await rooms.leave(room, bob.login, room.participants.filter((p) => p.login === bob.login));

    // The subscription's last check holds for the window: events still flow inside it.
    await post(app, alice, name, 'inside the window');
    expect(await nextEvent(bobs)).toMatchObject({ message: { content: 'inside the window' } });
    clock.advance(Limits.room.participationRecheckMs);
    await post(app, alice, name, 'after the window');
    const cut = await bobs.next();
    expect(cut.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    await bobs.completed;
    await eventually(() => app.services.pubsub.listeners(roomChannel(name)) === 0, { what: "Bob's listener to go" });
  });

  it('is cut off with NOT_FOUND from a private room, as from a room that does not exist, even when no ParticipantLeft was published', async () => {
    const clock = new ManualClock();
    const app = await startApp({ clock });
    const name = await roomWith(app, alice, [bob]);
    expect(codes(await gqlAs(app, 'mutation($r: String!) { setRoomVisibility(roomName: $r, visibility: PRIVATE) { name } }', { r: name }, alice))).toEqual([]);
    const bobs = await follow(app, bob, name);
    const { rooms } = app.services.stores;
    const room = (await rooms.byName(name))!;
    await rooms.leave(room, bob.login, room.participants.filter((p) => p.login === bob.login));
    clock.advance(Limits.room.participationRecheckMs);
    await post(app, alice, name, 'after the window');
    const cut = await bobs.next();
    // What subscribing now would answer him: the room is hidden from a former participant.
    expect(cut.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
    expect((await gqlAs(app, 'query($r: String!) { room(roomName: $r) { name } }', { r: name }, bob)).data).toEqual({ room: null });
    await bobs.completed;
  });

  it('is cut off with NOT_FOUND when the room it followed is gone and its RoomDeleted was lost, even if the name is taken again', async () => {
    const clock = new ManualClock();
    const app = await startApp({ clock });
    const name = await roomWith(app, alice, [bob]);
    const bobs = await follow(app, bob, name);
    // The room is deleted and created again without any event reaching Bob's instance.
    const { rooms } = app.services.stores;
    const old = (await rooms.byName(name))!;
    expect((await rooms.deleteIfUnchanged(old)).status).toBe('deleted');
    clock.advance(Limits.room.participationRecheckMs);
    // Bob joins the new room: its first event on the channel finds that the room he followed is gone.
    await roomWith(app, alice, [bob], name);
    const cut = await bobs.next();
    expect(cut.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
    await bobs.completed;
  });
});

describe('a subscriber that falls behind', () => {
  /**
   * Bob follows a room on an instance of his own clock; past the re-check window, the first event waits
   * for a read of the room and everything published meanwhile piles up for him. `events` land in one
   * go (delivered as a broker would, after the loop), before that read can answer.
   */
  async function floodedFeed(events: (name: string) => RoomEvent[]) {
    const clock = new ManualClock();
    const app = await startApp({ clock });
    const name = await roomWith(app, alice, [bob]);
    const bobs = await follow(app, bob, name);
    // The same feed over SSE: the end of a stream that fails is told there too, as an event.
    const bobsSse = await sseSubscribe(app, RoomEventsDocument, { roomName: name }, bob.token);
    await eventually(() => app.services.pubsub.listeners(roomChannel(name)) === 2, { what: 'the SSE feed to be live' });
    clock.advance(Limits.room.participationRecheckMs);
    for (const event of events(name)) void app.services.pubsub.publish(roomChannel(name), event);
    return { app, name, bobs, bobsSse };
  }
  const typist = { login: 'typist', firstname: 'Alice', lastname: 'Liddell' };
  const typing = (roomName: string, n: number): RoomEvent[] => Array.from({ length: n }, () => ({ kind: 'TypingStarted', roomName, user: typist }));

  it('gets the events buffered for it, then FELL_BEHIND, and is let go', async () => {
    const { app, name, bobs, bobsSse } = await floodedFeed((name) => typing(name, MAX_BUFFERED_EVENTS + 100));
    let delivered = 0;
    for (;;) {
      const result = await bobs.next();
      if (result.errors) {
        expect(result.errors.map((e) => e.extensions?.code)).toEqual(['FELL_BEHIND']);
        expect(result.errors[0]!.extensions?.maxBufferedEvents).toBe(MAX_BUFFERED_EVENTS);
        expect(result.errors[0]!.message).toMatch(/subscribe again/);
        break;
      }
      expect(result.data?.roomEvents).toMatchObject({ __typename: 'TypingStarted', user: { login: typist.login } });
      delivered++;
    }
    // What was buffered arrived in full (the one being checked and the buffer), nothing past it.
    expect(delivered).toBeGreaterThanOrEqual(MAX_BUFFERED_EVENTS);
    expect(delivered).toBeLessThanOrEqual(MAX_BUFFERED_EVENTS + 1);
    await bobs.completed;
    // Over SSE too: the buffered events, then FELL_BEHIND as the last result, then the stream's end.
    let overSse = 0;
    for (;;) {
      const result = await bobsSse.next();
      if (result.errors) {
        expect(result.errors.map((e) => e.extensions?.code)).toEqual(['FELL_BEHIND']);
        break;
      }
      overSse++;
    }
    expect(overSse).toBeGreaterThanOrEqual(MAX_BUFFERED_EVENTS);
    expect(await bobsSse.rest()).toMatch(/event: complete/);
    await eventually(() => app.services.pubsub.listeners(roomChannel(name)) === 0, { what: "Bob's listeners to go" });
    // Bob is not locked out: a new subscription follows the room again.
    const again = await follow(app, bob, name);
    await post(app, alice, name, 'caught up');
    expect(await nextEvent(again)).toMatchObject({ __typename: 'MessagePosted', message: { content: 'caught up' } });
  });

  it('ends without FELL_BEHIND when an event it had buffered ends the feed (the room deleted)', async () => {
    const deletedBy = { login: alice.login, firstname: 'Alice', lastname: 'Liddell' };
    const { bobs, bobsSse } = await floodedFeed((name) => [
      ...typing(name, 500),
      { kind: 'RoomDeleted', roomName: name, deletedBy },
      ...typing(name, MAX_BUFFERED_EVENTS),
    ]);
    const kinds: string[] = [];
    for (;;) {
      const result = await bobs.next();
      expect(result.errors).toBeUndefined();
      kinds.push(result.data!.roomEvents.__typename);
      if (kinds.at(-1) === 'RoomDeleted') break;
    }
    expect(kinds).toHaveLength(501);
    await bobs.completed;
    expect(bobs.pending()).toBe(0);
    bobsSse.close();
  });
});

describe('sendTyping', () => {
  it("reaches the room's other subscribers at most once per window, and never the typist", async () => {
    const name = await roomWith(appA, alice, [bob]);
    const bobs = await follow(appA, bob, name);
    const alices = await follow(appA, alice, name);
    const spy = recordCql(appA);
    const sent = await Promise.all(Array.from({ length: 5 }, () => gqlOk(appA, SendTypingDocument, { roomName: name }, alice.token)));
    spy.stop();
    expect(sent.filter((s) => s.sendTyping)).toHaveLength(1);
    expect(spy.writes()).toEqual([]);
    await post(appA, alice, name, 'typed it');
    // Bob: one TypingStarted, then the message. Alice: only the message.
    expect(await nextEvent(bobs)).toMatchObject({ __typename: 'TypingStarted', user: { login: alice.login } });
    expect(await nextEvent(bobs)).toMatchObject({ __typename: 'MessagePosted', message: { content: 'typed it' } });
    expect(await nextEvent(alices)).toMatchObject({ __typename: 'MessagePosted', message: { content: 'typed it' } });
    // Writes nothing: the history holds the message only.
    const page = await gqlOk(appA, HistoryDocument, { roomName: name }, alice.token);
    expect(page.room?.messages.edges.map((e) => e.node.content)).toEqual(['typed it', 'Bob Builder joins the room']);
    // Another user's typing has its own window.
    expect((await gqlOk(appA, SendTypingDocument, { roomName: name }, bob.token)).sendTyping).toBe(true);
    expect(codes(await gql(appA, SendTypingDocument, { roomName: name }, carol.token))).toEqual(['FORBIDDEN']);
  });

  it('opens the window again once it has passed', async () => {
    const name = await roomWith(appA, alice);
    expect((await gqlOk(appA, SendTypingDocument, { roomName: name }, alice.token)).sendTyping).toBe(true);
    await eventually(async () => (await gqlOk(appA, SendTypingDocument, { roomName: name }, alice.token)).sendTyping, {
      intervalMs: 250,
      what: 'the typing window to reopen',
    });
  });
});

describe('across instances', () => {
  it('delivers 200 messages posted on A to a subscriber on B, all of them, in history order', async () => {
    const name = await roomWith(appA, alice, [bob]);
    const onB = await follow(appB, bob, name);
    // Posted concurrently (20 at a time): the order to match is the order of the history.
    const contents = Array.from({ length: 200 }, (_, i) => `n${i}`);
    for (let i = 0; i < contents.length; i += 20) {
      await Promise.all(contents.slice(i, i + 20).map((c) => gqlOk(appA, PostMessageDocument, { roomName: name, content: c }, alice.token)));
    }
    const received: string[] = [];
    while (received.length < 200) {
      const e = await nextEvent(onB);
      if (e.__typename === 'MessagePosted') received.push(e.message.id);
    }
    const history: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await gqlOk(appB, HistoryDocument, { roomName: name, first: 200, after }, bob.token)).room!.messages;
      history.push(...page.edges.filter((e) => !e.node.systemMessage).map((e) => e.node.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor!;
    }
    expect(history).toHaveLength(200);
    expect(received).toEqual(history.reverse());
  });
});

describe('roomEvents over SSE', () => {
  it('streams events as text/event-stream', async () => {
    const name = await roomWith(appB, alice, [bob]);
    const channel = roomChannel(name);
    const stream = await sseSubscribe(appB, RoomEventsDocument, { roomName: name }, bob.token);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/text\/event-stream/);
    await eventually(() => appB.services.pubsub.listeners(channel) === 1, { what: 'the SSE subscription to be live' });

    const m = await post(appA, alice, name, 'over sse');
    const event = await stream.next();
    expect(event.data?.roomEvents).toMatchObject({ __typename: 'MessagePosted', message: { id: m.id, content: 'over sse' } });
    stream.close();
    await eventually(() => appB.services.pubsub.listeners(channel) === 0, { what: 'the SSE listener to go' });
  });
});
