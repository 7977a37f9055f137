/**
 * Fields that read the viewer in a room's feed (seenBy, Poll.myAnswers,
 * forwardedFrom) are answered per subscriber, but what they read is read once
 * per event: the same statements reach Cassandra for an event with one
 * subscriber as with 200, and each of the 200 still gets its own answer.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { App } from '../../../src/app.js';
import { ForwardMessageDocument, JoinRoomDocument, PostPollDocument, VotePollDocument } from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { gqlOk } from '../../testkit/http.js';
import { post, roomWith } from '../../testkit/data/rooms.js';
import { signUp, signUpMany, type TestUser } from '../../testkit/data/users.js';
import { roomFeed, type Feed } from '../../testkit/feeds.js';
import { recordCql } from '../../testkit/faults/cql-spy.js';
import { eventually } from '../../testkit/poll.js';
import { roomChannel } from '../../../src/resolvers/rooms/live/feed.js';

interface ViewerFieldsOfMessage {
  id: string;
  content: string | null;
  seenBy: { count: number; edges: Array<{ node: { login: string } }> };
  poll: { voterCount: number; answers: Array<{ votes: number }>; myAnswers: number[] } | null;
  forwardedFrom: { id: string; content: string | null } | null;
}
interface ViewerFieldsEvents {
  roomEvents: { __typename: string; message?: ViewerFieldsOfMessage };
}

/** A client's feed selecting every field of a message that reads the viewer. */
const ViewerFieldsDocument = parse(`
  subscription ViewerFields($roomName: String!) {
    roomEvents(roomName: $roomName) {
      __typename
      ... on MessagePosted { message { ...ViewerFieldsOfMessage } }
      ... on PollUpdated { message { ...ViewerFieldsOfMessage } }
    }
  }
  fragment ViewerFieldsOfMessage on Message {
    id
    content
    seenBy(first: 3) { count edges { node { login } } }
    poll { voterCount answers { votes } myAnswers }
    forwardedFrom { id content }
  }
`) as TypedDocumentNode<ViewerFieldsEvents, { roomName: string }>;

const SUBSCRIBERS = 200;

let app: App;
let creator: TestUser;
let viewers: TestUser[];
let room: string;
let source: string;

/** Joins each of `members` to `roomName`, a few at a time (each join is an LWT on the room's row). */
async function joinAll(roomName: string, members: TestUser[]): Promise<void> {
  for (let i = 0; i < members.length; i += 8) {
    await Promise.all(members.slice(i, i + 8).map((m) => gqlOk(app, JoinRoomDocument, { roomName }, m.token)));
  }
}

beforeAll(async () => {
  app = await startApp();
  creator = await signUp(app);
  viewers = await signUpMany(app, SUBSCRIBERS, 'viewer');
  room = await roomWith(app, creator);
  await joinAll(room, viewers);
  // Only the first two viewers take part in the room forwarded from: only they may see the original.
  source = await roomWith(app, creator, viewers.slice(0, 2));
}, 300_000);

/** The reads behind the viewer's fields: a poll's votes, a room's readers, messages, and rooms through the loader. */
function readsOf(statements: string[]) {
  const count = (pattern: RegExp) => statements.filter((s) => pattern.test(s)).length;
  return {
    pollVotes: count(/^SELECT .* FROM poll_votes\b/),
    roomReaders: count(/^SELECT .* FROM room_readers\b/),
    messages: count(/^SELECT .* FROM chat_room_messages\b/),
    // Rooms read for seenBy and forwardedFrom. A feed's re-check of access reads `room_name = ?` once per room
    // and window whatever the number of subscribers, when the clock says so: it is left out.
    rooms: count(/^SELECT .* FROM chat_rooms WHERE room_name IN\b/),
  };
}
type Reads = ReturnType<typeof readsOf>;

/**
 * Runs `trigger`, waits for every feed's next event, checks each with `check`, and answers the reads sent
 * meanwhile: the trigger's own (the same whatever the number of subscribers) and the event's executions.
 */
async function readsOfEvent(
  feeds: Feed<ViewerFieldsEvents>[],
  trigger: () => Promise<unknown>,
  check: (message: ViewerFieldsOfMessage, viewer: TestUser) => void,
): Promise<Reads> {
  const spy = recordCql(app);
  try {
    await trigger();
    const events = await Promise.all(feeds.map((feed) => feed.data(30_000)));
    events.forEach((event, i) => check(event.roomEvents.message!, viewers[i]!));
  } finally {
    spy.stop();
  }
  return readsOf(spy.statements());
}

/** Opens the first `n` viewers' feeds and waits until each is delivering (a post every one of them receives). */
async function openFeeds(n: number): Promise<Feed<ViewerFieldsEvents>[]> {
  const feeds: Feed<ViewerFieldsEvents>[] = [];
  for (const viewer of viewers.slice(0, n)) feeds.push(await roomFeed(app, viewer.token, ViewerFieldsDocument, { roomName: room }));
  const warm = await post(app, creator, room, `${n} feeds open`);
  for (const feed of feeds) expect((await feed.data(30_000)).roomEvents.message?.id).toBe(warm.id);
  return feeds;
}

/** A forward, a poll and votes on it, each event's reads, with `voters` voting one after the other. */
async function runEvents(feeds: Feed<ViewerFieldsEvents>[], voters: Array<{ viewer: TestUser; answers: number[] }>) {
  const original = await post(app, creator, source, 'the original');
  const mayReadOriginal = new Set(viewers.slice(0, 2).map((v) => v.login));
  const forward = await readsOfEvent(
    feeds,
    () => gqlOk(app, ForwardMessageDocument, { messageId: original.id, toRoom: room }, creator.token),
    (message, viewer) => {
      expect(message.content).toBe('the original');
      expect(message.forwardedFrom).toEqual(mayReadOriginal.has(viewer.login) ? { id: original.id, content: 'the original' } : null);
    },
  );
  let pollId = '';
  const poll = await readsOfEvent(
    feeds,
    async () => {
      const input = { roomName: room, question: 'Which?', answers: ['One', 'Two', 'Three'], multipleChoice: true };
      pollId = (await gqlOk(app, PostPollDocument, { input }, creator.token)).postPoll.id;
    },
    (message) => expect(message.poll).toEqual({ voterCount: 0, answers: [{ votes: 0 }, { votes: 0 }, { votes: 0 }], myAnswers: [] }),
  );
  const votes: Reads[] = [];
  const chosen = new Map<string, number[]>();
  for (const { viewer, answers } of voters) {
    chosen.set(viewer.login, answers);
    votes.push(
      await readsOfEvent(
        feeds,
        () => gqlOk(app, VotePollDocument, { messageId: pollId, answers }, viewer.token),
        (message, subscriber) => {
          expect(message.id).toBe(pollId);
          expect(message.poll!.voterCount).toBe(chosen.size);
          // Each subscriber's own answers, whoever executed the event before them.
          expect(message.poll!.myAnswers).toEqual(chosen.get(subscriber.login) ?? []);
        },
      ),
    );
  }
  return { forward, poll, votes };
}

describe('viewer-dependent fields in a room feed', () => {
  it('read the votes, the readers and the forwarded original once per event, for 1 subscriber as for 200', async () => {
    const lone = await openFeeds(1);
    const one = await runEvents(lone, [{ viewer: viewers[0]!, answers: [0] }]);
    for (const feed of lone) feed.unsubscribe();
    await eventually(() => app.services.pubsub.listeners(roomChannel(room)) === 0, { what: 'the lone feed closed' });

    const many = await runEvents(await openFeeds(SUBSCRIBERS), [
      { viewer: viewers[0]!, answers: [0] },
      { viewer: viewers[1]!, answers: [1, 2] },
      { viewer: viewers[SUBSCRIBERS - 1]!, answers: [2] },
    ]);
    expect(many.forward).toEqual(one.forward);
    expect(many.poll).toEqual(one.poll);
    for (const vote of many.votes) expect(vote).toEqual(one.votes[0]);
  }, 240_000);
});
