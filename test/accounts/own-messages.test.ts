/**
 * User.messages (a user's own messages across rooms) serves each message as the room message itself: under one id
 * a normalized cache (Relay, Apollo, urql Graphcache) keeps one object, so every field read through `me { messages }`
 * must be the one `room { messages }` and message(messageId:) give for that id, and nothing the author could not
 * read by that id shows up there. Loaded in batches: the queries a page costs do not grow with its size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { startApp, stopApp } from '../testkit/app.js';
import { gql } from '../testkit/http.js';
import { messageKey, post, roomWith } from '../testkit/data/rooms.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { cqlRow } from '../testkit/cql.js';
import { monthOfDay } from '../../src/buckets.js';

let app: App;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  app = await startApp();
  [alice, bob] = await signUpMany(app, 2, 'own');
});
afterAll(() => stopApp(app));

/** Every field of a Message a client would cache, with the viewer-dependent ones. */
const MESSAGE_FIELDS = `
  fragment Everything on Message {
    id roomName content createdAt systemMessage visible version editedAt deleted metadata
    author { id login }
    mentions { id login }
    reactions { emoji count reactedByViewer }
    poll { question answers { index text votes } multipleChoice closesAt myAnswers }
    forwardedFrom { id content }
    replyTo { id }
    replyCount lastReplyAt
    attachments { id }
    seenBy { count }
  }`;
const ROOM_MESSAGES = `query($roomName: String!) { room(roomName: $roomName) { messages(first: 50) { edges { node { ...Everything } } } } } ${MESSAGE_FIELDS}`;
const MY_MESSAGES = `query($first: Int, $after: String) {
  me { messages(first: $first, after: $after) { edges { node { ...Everything } } pageInfo { hasNextPage endCursor } } }
} ${MESSAGE_FIELDS}`;
const ONE_MESSAGE = `query($id: ID!) { message(messageId: $id) { ...Everything } } ${MESSAGE_FIELDS}`;

type Message = { id: string; roomName: string; content: string | null } & Record<string, unknown>;
type MyPage = { me: { messages: { edges: { node: Message }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } };

async function ok<T>(document: string, variables: Record<string, unknown>, user: TestUser): Promise<T> {
  const result = await gql<T, Record<string, unknown>>(app, document, variables, user.token);
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data!;
}

const myMessages = async (user: TestUser, first = 50, after?: string | null) =>
  (await ok<MyPage>(MY_MESSAGES, { first, after }, user)).me.messages;

async function roomMessages(user: TestUser, roomName: string): Promise<Map<string, Message>> {
  const data = await ok<{ room: { messages: { edges: { node: Message }[] } } }>(ROOM_MESSAGES, { roomName }, user);
  return new Map(data.room.messages.edges.map((e) => [e.node.id, e.node]));
}

/** Posts as `user` with the given mutation and answers the new message's id. */
async function posted(user: TestUser, document: string, variables: Record<string, unknown>): Promise<string> {
  const data = await ok<Record<string, { id: string }>>(document, variables, user);
  return Object.values(data)[0]!.id;
}

describe('User.messages', () => {
  it('serves under each id the message every other way to it serves: metadata, mentions, reactions, poll, thread, forward', async () => {
    const room = await roomWith(app, alice, [bob]);
    const plain = await posted(bob, 'mutation($r: String!, $c: String!, $m: JSON) { postMessage(roomName: $r, content: $c, metadata: $m) { id } }', {
      r: room,
      c: `hello @${alice.login}`,
      m: { topic: 'greetings', pinned: [1, 2] },
    });
    await ok('mutation($id: ID!) { addReaction(messageId: $id, emoji: "👍") { id } }', { id: plain }, alice);
    await ok('mutation($id: ID!) { addReaction(messageId: $id, emoji: "🎉") { id } }', { id: plain }, bob);
    await posted(alice, 'mutation($r: String!, $to: ID!) { postMessage(roomName: $r, content: "a reply", replyTo: $to) { id } }', { r: room, to: plain });
    const poll = await posted(bob, 'mutation($i: PostPollInput!) { postPoll(input: $i) { id } }', {
      i: { roomName: room, question: 'Lunch?', answers: ['pizza', 'soup'] },
    });
    await ok('mutation($id: ID!) { votePoll(messageId: $id, answers: [1]) { question } }', { id: poll }, alice);
    await ok('mutation($id: ID!) { votePoll(messageId: $id, answers: [0]) { question } }', { id: poll }, bob);
    const byAlice = (await post(app, alice, room, 'worth forwarding')).id;
    const forward = await posted(bob, 'mutation($id: ID!, $r: String!) { forwardMessage(messageId: $id, toRoom: $r) { ... on Message { id } } }', {
      id: byAlice,
      r: room,
    });
    const reply = await posted(bob, 'mutation($r: String!, $to: ID!) { postMessage(roomName: $r, content: "my reply", replyTo: $to) { id } }', {
      r: room,
      to: byAlice,
    });
    await ok('mutation($r: String!, $to: ID!) { markRoomRead(roomName: $r, upTo: $to) { __typename } }', { r: room, to: reply }, alice);

    const inRoom = await roomMessages(bob, room);
    const mine = (await myMessages(bob)).edges.map((e) => e.node).filter((m) => m.roomName === room);
    expect(mine.map((m) => m.id)).toEqual([reply, forward, poll, plain]);
    for (const message of mine) {
      expect(message, `${String(message.content)} through me { messages }`).toEqual(inRoom.get(message.id));
      expect((await ok<{ message: Message }>(ONE_MESSAGE, { id: message.id }, bob)).message).toEqual(message);
    }
    // The fields the author's copy never had are there, so the comparison above compared something.
    const plainOfMine = mine.find((m) => m.id === plain)!;
    expect(plainOfMine).toMatchObject({ metadata: { topic: 'greetings' }, mentions: [{ login: alice.login }], replyCount: 1 });
    expect(plainOfMine.reactions).toHaveLength(2);
    expect(mine.find((m) => m.id === poll)!.poll).toMatchObject({ myAnswers: [0], answers: [{ votes: 1 }, { votes: 1 }] });
    expect(mine.find((m) => m.id === forward)!.forwardedFrom).toEqual({ id: byAlice, content: 'worth forwarding' });
    expect(mine.find((m) => m.id === reply)!.replyTo).toEqual({ id: byAlice });
  });

  it("keeps the author's messages of a room they left, as message(messageId:) does, and nothing of a room that is gone", async () => {
    const left = await roomWith(app, alice, [bob]);
    const kept = (await post(app, bob, left, 'said before leaving')).id;
    await ok('mutation($r: String!) { leaveRoom(roomName: $r) }', { r: left }, bob);

    // A room whose rows went while its author's copies stayed (a cleanup cut off midway), and one of an earlier
    // incarnation of a name now taken again: neither message reads by its id any more.
    const deleted = await roomWith(app, alice, [bob]);
    const ofDeleted = (await post(app, bob, deleted, 'room deleted')).id;
    const renewed = await roomWith(app, alice, [bob]);
    const ofEarlier = (await post(app, bob, renewed, 'of the earlier room')).id;
    await cqlRow(app, 'DELETE FROM chat_rooms WHERE room_name = ?', [deleted]);
    await cqlRow(app, 'UPDATE chat_rooms SET creation_date = ? WHERE room_name = ?', [new Date(Date.now() + 1000), renewed]);
    for (const id of [ofDeleted, ofEarlier]) {
      expect((await ok<{ message: Message | null }>(ONE_MESSAGE, { id }, bob)).message, `message ${messageKey(id).roomName}`).toBeNull();
      const copy = await cqlRow(app, 'SELECT content FROM messages_by_author WHERE author_login = ? AND time_bucket = ? AND message_id = ?', [
        bob.login,
        monthOfDay(messageKey(id).bucket),
        messageKey(id).messageId,
      ]);
      expect(copy, "the author's copy is still there").toBeDefined();
    }

    // Newest first: the two gone, then the one kept. A page of the two gone is empty, and its cursor moves past them.
    const empty = await myMessages(bob, 2);
    expect(empty.edges).toEqual([]);
    expect(empty.pageInfo.hasNextPage).toBe(true);
    const next = await myMessages(bob, 1, empty.pageInfo.endCursor);
    expect(next.edges.map((e) => e.node.id)).toEqual([kept]);
    expect(next.edges[0]!.node).toEqual((await ok<{ message: Message }>(ONE_MESSAGE, { id: kept }, bob)).message);
  });

  it('loads a page in batches: the queries do not grow with the page, across rooms', async () => {
    const [carol] = await signUpMany(app, 1, 'own-batch');
    const rooms = [await roomWith(app, alice, [carol!]), await roomWith(app, bob, [carol!])];
    for (let i = 0; i < 8; i += 1) await post(app, carol!, rooms[i % 2]!, `message ${i}`);
    const queriesFor = async (first: number) => {
      const before = app.services.db.queryCount;
      const page = await ok<MyPage>(`query($first: Int) { me { messages(first: $first) { edges { node { id content author { login } } } } } }`, { first }, carol!);
      expect(page.me.messages.edges).toHaveLength(first);
      return app.services.db.queryCount - before;
    };
    expect(await queriesFor(8)).toBe(await queriesFor(2));
  });
});
