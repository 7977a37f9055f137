/**
 * What people can do to a room message: edit it (with history), delete it,
 * react to it, reply to it in a thread, pin it and mention people in it. Each
 * over HTTP and graphql-ws against the real node.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import {
  AddReactionDocument,
  DeleteMessageDocument,
  DeleteRoomDocument,
  EditMessageDocument,
  RoomReadStateDocument,
  HideMessageDocument,
  HistoryDocument,
  InboxEventsDocument,
  MessageReactionsDocument,
  MessageWithEditsDocument,
  MyMessagesDocument,
  PinMessageDocument,
  PinnedMessagesDocument,
  PostReplyDocument,
  RemoveReactionDocument,
  RoomActionEventsDocument,
  RoomDocument,
  SendDirectMessageDocument,
  ThreadDocument,
  UnpinMessageDocument,
  type RoomActionEventsSubscription,
} from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { messageKey, post, roomWith } from '../testkit/data/rooms.js';
import { inboxFeed, roomFeed, type Feed } from '../testkit/feeds.js';
import { cqlRow } from '../testkit/cql.js';
import { recordCql } from '../testkit/faults/cql-spy.js';
import { failNextStatement } from '../testkit/faults/statement-faults.js';
import { Limits } from '../../src/limits.js';
import { newTimeUuid } from '../../src/timeuuids.js';

let app: App;
let alice: TestUser; // creates the rooms
let bob: TestUser;
let carol: TestUser;
let dave: TestUser; // takes part in no room

beforeAll(async () => {
  app = await startApp();
  [alice, bob, carol, dave] = await Promise.all([
    signUp(app, { firstname: 'Alice' }),
    signUp(app, { firstname: 'Bob' }),
    signUp(app, { firstname: 'Carol' }),
    signUp(app, { firstname: 'Dave' }),
  ]);
});

const fieldOf = (r: { errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> }) => r.errors?.[0]?.extensions?.field;

async function withEdits(id: string, token: string, first?: number, after?: string) {
  return (await gqlOk(app, MessageWithEditsDocument, { messageId: id, first, after }, token)).message!;
}

/** The content of a message in its author's own list of messages (me.messages). */
async function authorsCopy(author: TestUser, id: string) {
  const mine = (await gqlOk(app, MyMessagesDocument, { first: 50 }, author.token)).me!.messages!;
  const edge = mine.edges.find((e) => e.node.id === id);
  expect(edge, 'the message is in its author’s list').toBeDefined();
  return edge!.node.content;
}

async function roomEvents(user: TestUser, roomName: string) {
  const feed = await roomFeed(app, user.token, RoomActionEventsDocument, { roomName });
  return feed;
}

type RoomEvent = RoomActionEventsSubscription['roomEvents'];
async function nextOf<K extends RoomEvent['__typename']>(feed: Feed<RoomActionEventsSubscription>, kind: K) {
  const event = (await feed.data()).roomEvents;
  expect(event.__typename).toBe(kind);
  return event as Extract<RoomEvent, { __typename: K }>;
}

describe('editMessage', () => {
  it('replaces the content, keeps every earlier version newest first, and tells the room', async () => {
    const room = await roomWith(app, alice, [bob]);
    const feed = await roomEvents(alice, room);
    const posted = await post(app, bob, room, 'first draft');
    await nextOf(feed, 'MessagePosted');

    const once = (await gqlOk(app, EditMessageDocument, { messageId: posted.id, content: '  second draft ' }, bob.token)).editMessage;
    expect(once).toMatchObject({ id: posted.id, content: 'second draft', version: 1, deleted: false });
    expect(Date.parse(once.editedAt!)).toBeGreaterThanOrEqual(Date.parse(posted.createdAt));
    const edited = await nextOf(feed, 'MessageEdited');
    expect(edited.message).toMatchObject({ id: posted.id, content: 'second draft', version: 1 });

    await gqlOk(app, EditMessageDocument, { messageId: posted.id, content: 'third draft', expectedVersion: 1 }, bob.token);
    const read = await withEdits(posted.id, alice.token);
    expect(read).toMatchObject({ content: 'third draft', version: 2 });
    expect(read.edits.edges.map((e) => [e.node.version, e.node.content])).toEqual([
      [1, 'second draft'],
      [0, 'first draft'],
    ]);
    expect(read.edits.edges[1]!.node.createdAt).toBe(posted.createdAt);
    expect(read.edits.edges[0]!.node.createdAt).toBe(once.editedAt);

    // Paged one at a time, the same versions in the same order.
    const page1 = await withEdits(posted.id, alice.token, 1);
    expect(page1.edits.edges.map((e) => e.node.version)).toEqual([1]);
    expect(page1.edits.pageInfo.hasNextPage).toBe(true);
    const page2 = await withEdits(posted.id, alice.token, 1, page1.edits.pageInfo.endCursor!);
    expect(page2.edits.edges.map((e) => e.node.version)).toEqual([0]);
    expect(page2.edits.pageInfo.hasNextPage).toBe(false);

    // History and the author's own list show the current version.
    const history = (await gqlOk(app, HistoryDocument, { roomName: room, first: 5 }, alice.token)).room!.messages!;
    expect(history.edges.find((e) => e.node.id === posted.id)?.node.content).toBe('third draft');
    const mine = (await gqlOk(app, MyMessagesDocument, { first: 50 }, bob.token)).me!.messages!;
    expect(mine.edges.find((e) => e.node.id === posted.id)?.node.content).toBe('third draft');
  });

  it("is heard by the room once it applied even when its author's copy fails, and its retry finishes that copy without a new version", async () => {
    const room = await roomWith(app, alice, [bob]);
    const feed = await roomEvents(alice, room);
    const posted = await post(app, bob, room, 'draft');
    await nextOf(feed, 'MessagePosted');

    const fault = failNextStatement(app, /^\s*UPDATE messages_by_author/);
    const failed = await gql(app, EditMessageDocument, { messageId: posted.id, content: 'final', expectedVersion: 0 }, bob.token);
    expect(fault.fired()).toBe(true);
    expect(codes(failed)).toEqual(['SERVICE_UNAVAILABLE']);
    expect(failed.errors?.[0]?.extensions?.retryAfter).toBeGreaterThan(0);
    // The edit stands (its LWT applied): the room has it and has heard of it.
    expect((await nextOf(feed, 'MessageEdited')).message).toMatchObject({ id: posted.id, content: 'final', version: 1 });
    expect(await withEdits(posted.id, alice.token)).toMatchObject({ content: 'final', version: 1 });
    expect(await authorsCopy(bob, posted.id)).toBe('draft');

    // The client does what it was told, with the same arguments: the edit is finished, not made again.
    const retried = (await gqlOk(app, EditMessageDocument, { messageId: posted.id, content: 'final', expectedVersion: 0 }, bob.token)).editMessage;
    expect(retried).toMatchObject({ id: posted.id, content: 'final', version: 1 });
    expect(await authorsCopy(bob, posted.id)).toBe('final');
    const read = await withEdits(posted.id, alice.token);
    expect(read.edits.edges.map((e) => [e.node.version, e.node.content])).toEqual([[0, 'draft']]);
    // No second event: the next one is the next post.
    await post(app, bob, room, 'next');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('next');
  });

  it('is for the author only, never on system, hidden or deleted messages, and checks its input', async () => {
    const room = await roomWith(app, alice, [bob]);
    const byBob = await post(app, bob, room, 'mine');
    expect(codes(await gql(app, EditMessageDocument, { messageId: byBob.id, content: 'hijack' }, alice.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, EditMessageDocument, { messageId: byBob.id, content: 'x' }))).toEqual(['UNAUTHENTICATED']);

    const empty = await gql(app, EditMessageDocument, { messageId: byBob.id, content: '   ' }, bob.token);
    expect([codes(empty), fieldOf(empty)]).toEqual([['BAD_USER_INPUT'], 'content']);
    const badId = await gql(app, EditMessageDocument, { messageId: 'not-an-id', content: 'x' }, bob.token);
    expect([codes(badId), fieldOf(badId)]).toEqual([['BAD_USER_INPUT'], 'messageId']);
    const stale = await gql(app, EditMessageDocument, { messageId: byBob.id, content: 'x', expectedVersion: 3 }, bob.token);
    expect(codes(stale)).toEqual(['CONFLICT']);

    // Bob's join made a system message about him: he did not write it.
    const history = (await gqlOk(app, HistoryDocument, { roomName: room, first: 10 }, bob.token)).room!.messages!;
    const joined = history.edges.find((e) => e.node.systemMessage)!.node;
    const onSystem = await gql(app, EditMessageDocument, { messageId: joined.id, content: 'rewritten' }, bob.token);
    expect([codes(onSystem), onSystem.errors?.[0]?.extensions?.reason, fieldOf(onSystem)]).toEqual([['MESSAGE_NOT_EDITABLE'], 'SYSTEM_MESSAGE', 'messageId']);

    const hidden = await post(app, bob, room, 'to hide');
    await gqlOk(app, EditMessageDocument, { messageId: hidden.id, content: 'to hide, edited' }, bob.token);
    await gqlOk(app, HideMessageDocument, { messageId: hidden.id }, alice.token);
    // Its history goes from view with its content.
    expect((await withEdits(hidden.id, alice.token)).edits.edges).toEqual([]);
    const onHidden = await gql(app, EditMessageDocument, { messageId: hidden.id, content: 'back' }, bob.token);
    expect([codes(onHidden), onHidden.errors?.[0]?.extensions?.reason, fieldOf(onHidden)]).toEqual([['MESSAGE_NOT_EDITABLE'], 'HIDDEN', 'messageId']);

    await gqlOk(app, DeleteMessageDocument, { messageId: byBob.id }, bob.token);
    const onDeleted = await gql(app, EditMessageDocument, { messageId: byBob.id, content: 'back' }, bob.token);
    expect([codes(onDeleted), onDeleted.errors?.[0]?.extensions?.reason, fieldOf(onDeleted)]).toEqual([['MESSAGE_NOT_EDITABLE'], 'DELETED', 'messageId']);
    expect((await withEdits(byBob.id, bob.token)).content).toBeNull();
  });
});

describe('deleteMessage', () => {
  it('leaves a tombstone in place: same id, same cursor, no content, no versions, no reactions', async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const before = await post(app, bob, room, 'before');
    const doomed = await post(app, bob, room, 'doomed');
    const after = await post(app, carol, room, 'after');
    const feed = await roomEvents(alice, room);
    await gqlOk(app, EditMessageDocument, { messageId: doomed.id, content: 'doomed, edited' }, bob.token);
    await gqlOk(app, AddReactionDocument, { messageId: doomed.id, emoji: '👍' }, carol.token);
    // The reaction's event comes once its coalescing window has passed: taken before the deletion's.
    await nextOf(feed, 'MessageEdited');
    await nextOf(feed, 'ReactionChanged');
    const pageBefore = (await gqlOk(app, HistoryDocument, { roomName: room, first: 3 }, alice.token)).room!.messages!;

    const tombstone = (await gqlOk(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token)).deleteMessage;
    expect(tombstone).toMatchObject({ id: doomed.id, deleted: true, content: null, mentions: [] });
    expect((await nextOf(feed, 'MessageDeleted')).message).toMatchObject({ id: doomed.id, deleted: true, content: null });

    const pageAfter = (await gqlOk(app, HistoryDocument, { roomName: room, first: 3 }, alice.token)).room!.messages!;
    expect(pageAfter.edges.map((e) => e.node.id)).toEqual(pageBefore.edges.map((e) => e.node.id));
    expect(pageAfter.edges.map((e) => e.node.content)).toEqual(['after', null, 'before']);
    // A cursor taken before the deletion resumes where it did.
    const resumed = (await gqlOk(app, HistoryDocument, { roomName: room, first: 2, after: pageBefore.edges[0]!.cursor }, alice.token)).room!.messages!;
    expect(resumed.edges.map((e) => [e.node.id, e.node.deleted])).toEqual([
      [doomed.id, true],
      [before.id, false],
    ]);
    expect(after.id).toBe(pageAfter.edges[0]!.node.id);
    expect(before.id).toBe(pageAfter.edges[2]!.node.id);
    const read = await withEdits(doomed.id, alice.token);
    expect(read.edits.edges).toEqual([]);
    expect((await gqlOk(app, MessageReactionsDocument, { messageId: doomed.id }, alice.token)).message!.reactions).toEqual([]);
    // The content is gone from storage too: the room's row, its versions and the author's copy.
    const { bucket, messageId } = messageKey(doomed.id);
    const row = await cqlRow(app, 'SELECT content, deleted FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [room, bucket, messageId]);
    expect(row).toMatchObject({ content: null, deleted: true });
    const versions = await cqlRow(app, 'SELECT COUNT(*) AS n FROM message_versions WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [room, bucket, messageId]);
    expect(Number(versions!.n)).toBe(0);
    const mine = (await gqlOk(app, MyMessagesDocument, { first: 50 }, bob.token)).me!.messages!;
    expect(mine.edges.find((e) => e.node.id === doomed.id)?.node.content).toBeNull();

    // Again: the tombstone, and no second event (the next event is the next post).
    expect((await gqlOk(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token)).deleteMessage.deleted).toBe(true);
    await post(app, carol, room, 'next');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('next');
  });

  it("is heard by the room once it applied even when its author's copy fails to go, and its retry drops that copy", async () => {
    const room = await roomWith(app, alice, [bob]);
    const doomed = await post(app, bob, room, 'doomed');
    await gqlOk(app, EditMessageDocument, { messageId: doomed.id, content: 'doomed, edited' }, bob.token);
    const feed = await roomEvents(alice, room);

    const fault = failNextStatement(app, /^\s*UPDATE messages_by_author/);
    const failed = await gql(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token);
    expect(fault.fired()).toBe(true);
    expect(codes(failed)).toEqual(['SERVICE_UNAVAILABLE']);
    expect((await nextOf(feed, 'MessageDeleted')).message).toMatchObject({ id: doomed.id, deleted: true, content: null });
    expect(await withEdits(doomed.id, alice.token)).toMatchObject({ deleted: true, content: null, edits: { edges: [] } });
    expect(await authorsCopy(bob, doomed.id)).toBe('doomed, edited');

    expect((await gqlOk(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token)).deleteMessage).toMatchObject({ deleted: true, content: null });
    expect(await authorsCopy(bob, doomed.id)).toBeNull();
    const { bucket, messageId } = messageKey(doomed.id);
    const versions = await cqlRow(app, 'SELECT COUNT(*) AS n FROM message_versions WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [room, bucket, messageId]);
    expect(Number(versions!.n)).toBe(0);
    await post(app, bob, room, 'next');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('next');
  });

  it("goes with its room: a deleted room leaves no versions, reactions or threads behind", async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, bob, room, 'short-lived');
    await gqlOk(app, EditMessageDocument, { messageId: m.id, content: 'edited' }, bob.token);
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👋' }, alice.token);
    await gqlOk(app, PostReplyDocument, { roomName: room, content: 'reply', replyTo: m.id }, alice.token);
    const { bucket, messageId } = messageKey(m.id);
    const key = [room, bucket, messageId];
    const tables = [['message_versions', 'time_bucket = ? AND message_id'], ['message_reactions', 'time_bucket = ? AND message_id'], ['message_replies', 'parent_bucket = ? AND parent_id']];
    const rows = async () => {
      const counts: Record<string, number> = {};
      for (const [table, parent] of tables) counts[table!] = Number((await cqlRow(app, `SELECT COUNT(*) AS n FROM ${table} WHERE room_name = ? AND ${parent} = ?`, key))!.n);
      return counts;
    };
    // Each table holds the message's row before (the key reaches them), none after.
    expect(await rows()).toEqual({ message_versions: 1, message_reactions: 1, message_replies: 1 });
    await gqlOk(app, DeleteRoomDocument, { roomName: room }, alice.token);
    expect(await rows()).toEqual({ message_versions: 0, message_reactions: 0, message_replies: 0 });
  });

  it("is for the author or the room's creator", async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const byBob = await post(app, bob, room, 'by bob');
    expect(codes(await gql(app, DeleteMessageDocument, { messageId: byBob.id }, carol.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, DeleteMessageDocument, { messageId: byBob.id }, dave.token))).toEqual(['FORBIDDEN']);
    expect((await gqlOk(app, DeleteMessageDocument, { messageId: byBob.id }, alice.token)).deleteMessage.deleted).toBe(true);
  });
});

describe('reactions', () => {
  it('counts each person once per emoji, knows the viewer, and lists the first people', async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const m = await post(app, alice, room, 'react to me');
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👍' }, carol.token);
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👍' }, bob.token);
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👍' }, bob.token); // twice: one reaction
    const added = (await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '🇫🇷' }, bob.token)).addReaction;
    // In code point order: 🇫🇷 (U+1F1EB U+1F1F7) before 👍 (U+1F44D).
    expect(added.reactions.map((r) => [r.emoji, r.count, r.reactedByViewer])).toEqual([
      ['🇫🇷', 1, true],
      ['👍', 2, true],
    ]);
    const asAlice = (await gqlOk(app, MessageReactionsDocument, { messageId: m.id }, alice.token)).message!.reactions;
    expect(asAlice.map((r) => [r.emoji, r.count, r.reactedByViewer])).toEqual([
      ['🇫🇷', 1, false],
      ['👍', 2, false],
    ]);
    expect(asAlice[1]!.firstReactors.map((u) => u.login)).toEqual([bob.login, carol.login].sort());

    const removed = (await gqlOk(app, RemoveReactionDocument, { messageId: m.id, emoji: '🇫🇷' }, bob.token)).removeReaction;
    expect(removed.reactions.map((r) => [r.emoji, r.count])).toEqual([['👍', 2]]);
    // Removing what is not there changes nothing.
    await gqlOk(app, RemoveReactionDocument, { messageId: m.id, emoji: '🎉' }, alice.token);
    expect((await gqlOk(app, MessageReactionsDocument, { messageId: m.id }, alice.token)).message!.reactions.map((r) => r.count)).toEqual([2]);
  });

  it('takes exactly one emoji, from participants, and at most 20 kinds per message', async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, alice, room, 'limits');
    for (const emoji of ['a', '👍👍', '', ':)', '👍a', '1', 'x'.repeat(100)]) {
      const r = await gql(app, AddReactionDocument, { messageId: m.id, emoji }, bob.token);
      expect([codes(r), fieldOf(r)], JSON.stringify(emoji)).toEqual([['BAD_USER_INPUT'], 'emoji']);
    }
    for (const emoji of ['👍🏽', '👨‍👩‍👧', '❤️', ' 👍 ']) {
      expect((await gql(app, AddReactionDocument, { messageId: m.id, emoji }, bob.token)).errors, emoji).toBeUndefined();
    }
    expect(codes(await gql(app, AddReactionDocument, { messageId: m.id, emoji: '🎉' }, dave.token))).toEqual(['FORBIDDEN']);

    // Four kinds so far: sixteen more make twenty.
    const more = ['😀', '😁', '😂', '🤣', '😃', '😄', '😅', '😆', '😉', '😊', '😋', '😎', '😍', '😘', '🥰', '😗'];
    for (const emoji of more) await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji }, alice.token);
    const full = await gql(app, AddReactionDocument, { messageId: m.id, emoji: '🚀' }, alice.token);
    expect([codes(full), full.errors?.[0]?.extensions?.limit, full.errors?.[0]?.extensions?.max]).toEqual([['LIMIT_REACHED'], 'REACTION_KINDS_PER_MESSAGE', 20]);
    // A kind the message already has is still welcome.
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '😀' }, bob.token);
    expect((await gqlOk(app, MessageReactionsDocument, { messageId: m.id }, bob.token)).message!.reactions).toHaveLength(20);
  });

  it('publishes one ReactionChanged for a burst on one message, with the counts after it', async () => {
    // A window far longer than the burst takes: every change falls in the first one.
    const coalescing = await startApp({ env: { REACTION_EVENT_WINDOW_MS: '2000' } });
    const room = await roomWith(coalescing, alice, [bob, carol]);
    const m = await post(coalescing, alice, room, 'burst');
    const feed = await roomFeed(coalescing, alice.token, RoomActionEventsDocument, { roomName: room });
    await Promise.all(
      [bob, carol, alice].flatMap((u) => ['🔥', '✅'].map((emoji) => gqlOk(coalescing, AddReactionDocument, { messageId: m.id, emoji }, u.token))),
    );
    // One event for the six changes, with the counts after all of them and when it counted them; the next event
    // is the next post's.
    const event = await nextOf(feed, 'ReactionChanged');
    expect(event.reactions).toEqual([
      { emoji: '✅', count: 3 },
      { emoji: '🔥', count: 3 },
    ]);
    expect(Date.parse(event.countedAt)).toBeGreaterThanOrEqual(Date.parse(m.createdAt));
    await post(coalescing, bob, room, 'after the burst');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('after the burst');
  });
});

describe('replies and threads', () => {
  it('posts a reply into the room and into its parent’s thread, paged oldest first', async () => {
    const room = await roomWith(app, alice, [bob]);
    const parent = await post(app, alice, room, 'thread starter');
    const feed = await roomEvents(alice, room);
    const replies = [];
    for (let i = 0; i < 7; i++) {
      replies.push((await gqlOk(app, PostReplyDocument, { roomName: room, content: `reply ${i}`, replyTo: parent.id }, bob.token)).postMessage);
    }
    expect(replies[0]!.replyTo?.id).toBe(parent.id);
    const live = await nextOf(feed, 'MessagePosted');
    expect(live.message).toMatchObject({ content: 'reply 0', replyTo: { id: parent.id } });

    const thread = (await gqlOk(app, ThreadDocument, { messageId: parent.id, first: 3 }, alice.token)).message!;
    expect(thread.replyCount).toBe(7);
    expect(thread.lastReplyAt).toBe(replies.at(-1)!.createdAt);
    const seen = [...thread.replies.edges.map((e) => e.node.content)];
    let cursor = thread.replies.pageInfo.endCursor;
    let more = thread.replies.pageInfo.hasNextPage;
    while (more) {
      const page = (await gqlOk(app, ThreadDocument, { messageId: parent.id, first: 3, after: cursor }, alice.token)).message!.replies;
      seen.push(...page.edges.map((e) => e.node.content));
      cursor = page.pageInfo.endCursor;
      more = page.pageInfo.hasNextPage;
    }
    expect(seen).toEqual(replies.map((r) => r.content));
    // Replies are room messages too, marked as replies.
    const history = (await gqlOk(app, HistoryDocument, { roomName: room, first: 3 }, alice.token)).room!.messages!;
    expect(history.edges[0]!.node.id).toBe(replies.at(-1)!.id);
    // A message without replies costs nothing and says so.
    expect((await gqlOk(app, ThreadDocument, { messageId: replies[0]!.id }, alice.token)).message).toMatchObject({
      replyCount: 0,
      lastReplyAt: null,
      replies: { edges: [] },
    });
  });

  it('is one level deep, within the room, and never under a deleted or system message', async () => {
    const room = await roomWith(app, alice, [bob]);
    const other = await roomWith(app, alice);
    const parent = await post(app, alice, room, 'parent');
    const reply = (await gqlOk(app, PostReplyDocument, { roomName: room, content: 'reply', replyTo: parent.id }, bob.token)).postMessage;
    const elsewhere = await post(app, alice, other, 'elsewhere');
    const deleted = await post(app, alice, room, 'deleted');
    await gqlOk(app, DeleteMessageDocument, { messageId: deleted.id }, alice.token);
    const joined = (await gqlOk(app, HistoryDocument, { roomName: room, first: 20 }, alice.token)).room!.messages!.edges.find((e) => e.node.systemMessage)!.node;
    for (const replyTo of [reply.id, elsewhere.id, deleted.id, joined.id, 'garbage']) {
      const r = await gql(app, PostReplyDocument, { roomName: room, content: 'nope', replyTo }, bob.token);
      expect([codes(r), fieldOf(r)], replyTo).toEqual([['BAD_USER_INPUT'], 'replyTo']);
    }
    expect(codes(await gql(app, ThreadDocument, { messageId: parent.id }, dave.token))).toEqual(['FORBIDDEN']);
  });
});

describe('pins', () => {
  it("lists the creator's pins in pin order and tells the room", async () => {
    const room = await roomWith(app, alice, [bob]);
    const [m1, m2, m3] = [await post(app, bob, room, 'one'), await post(app, bob, room, 'two'), await post(app, bob, room, 'three')];
    const feed = await roomEvents(bob, room);
    for (const m of [m2, m3, m1, m2]) await gqlOk(app, PinMessageDocument, { messageId: m.id }, alice.token);
    const pinned = async () => (await gqlOk(app, PinnedMessagesDocument, { roomName: room }, bob.token)).room!.pinnedMessages.map((m) => m.content);
    expect(await pinned()).toEqual(['two', 'three', 'one']);
    for (const m of [m2, m3, m1]) expect((await nextOf(feed, 'MessagePinned')).message.id).toBe(m.id);

    await gqlOk(app, UnpinMessageDocument, { messageId: m3.id }, alice.token);
    await gqlOk(app, UnpinMessageDocument, { messageId: m3.id }, alice.token); // not pinned any more: no change, no event
    expect(await pinned()).toEqual(['two', 'one']);
    expect((await nextOf(feed, 'MessageUnpinned')).message.id).toBe(m3.id);
    // The second unpin published nothing: the room's next event is the next post's (one instance keeps its order).
    await post(app, bob, room, 'barrier');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('barrier');
    expect(codes(await gql(app, PinMessageDocument, { messageId: m3.id }, bob.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, PinnedMessagesDocument, { roomName: room }, dave.token))).toEqual(['FORBIDDEN']);
    expect((await gqlOk(app, RoomDocument, { roomName: room }, bob.token)).room?.name).toBe(room);
  });
});

describe('pins and deletion, and the limits of pins and edits', () => {
  it('unpins a message as it is deleted, after its MessageDeleted, freeing its place', async () => {
    const room = await roomWith(app, alice, [bob]);
    const [kept, doomed] = [await post(app, bob, room, 'kept'), await post(app, bob, room, 'doomed')];
    for (const m of [kept, doomed]) await gqlOk(app, PinMessageDocument, { messageId: m.id }, alice.token);
    const feed = await roomEvents(alice, room);
    await gqlOk(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token);
    expect((await feed.data()).roomEvents).toMatchObject({ __typename: 'MessageDeleted', message: { id: doomed.id } });
    expect((await feed.data()).roomEvents).toMatchObject({ __typename: 'MessageUnpinned', message: { id: doomed.id } });
    expect((await gqlOk(app, PinnedMessagesDocument, { roomName: room }, bob.token)).room!.pinnedMessages.map((m) => m.id)).toEqual([kept.id]);
    const stored = await cqlRow(app, 'SELECT pinned_messages FROM chat_rooms WHERE room_name = ?', [room]);
    expect((stored!.pinned_messages as unknown[]).map(String)).toEqual([messageKey(kept.id).messageId]);
  });

  it(`refuses the ${Limits.room.maxPins + 1}th pin and the ${Limits.room.edits.maxVersion + 1}th edit with LIMIT_REACHED, naming the limit`, async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, alice, room, 'pin me');
    // The room holds its limit of pins already (written to storage: 50 posts and pins would only slow the test).
    const others = Array.from({ length: Limits.room.maxPins }, () => newTimeUuid(new Date()));
    await cqlRow(app, 'UPDATE chat_rooms SET pinned_messages = ? WHERE room_name = ?', [others, room]);
    const pin = await gql(app, PinMessageDocument, { messageId: m.id }, alice.token);
    expect([codes(pin), pin.errors?.[0]?.extensions?.limit, pin.errors?.[0]?.extensions?.max]).toEqual([['LIMIT_REACHED'], 'PINS_PER_ROOM', Limits.room.maxPins]);

    // A message at its last version takes no more edits.
    const k = messageKey(m.id);
    await cqlRow(app, 'UPDATE chat_room_messages SET version = ? WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [
      Limits.room.edits.maxVersion,
      k.roomName,
      k.bucket,
      k.messageId,
    ]);
    const edit = await gql(app, EditMessageDocument, { messageId: m.id, content: 'once more' }, alice.token);
    expect([codes(edit), edit.errors?.[0]?.extensions?.limit, edit.errors?.[0]?.extensions?.max]).toEqual([['LIMIT_REACHED'], 'EDITS_PER_MESSAGE', Limits.room.edits.maxVersion]);
  });
});

describe('mentions', () => {
  it('mentions participants only, and tells each one on their own feed once', async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const bobFeed = await inboxFeed(app, bob, InboxEventsDocument);
    const carolFeed = await inboxFeed(app, carol, InboxEventsDocument);
    const daveFeed = await inboxFeed(app, dave, InboxEventsDocument);

    const content = `hi @${bob.login} and @${bob.login.toUpperCase()}, not @${dave.login} nor @nobody_here nor mail@${carol.login}`;
    const m = (await gqlOk(app, PostReplyDocument, { roomName: room, content }, alice.token)).postMessage;
    expect(m.mentions.map((u) => u.login)).toEqual([bob.login]);
    const toBob = (await bobFeed.data()).inboxEvents;
    expect(toBob).toMatchObject({ __typename: 'Mentioned', mentionedIn: { id: m.id, roomName: room, author: { login: alice.login } } });

    // The post did not mention carol (mail@carol is an address): her next event is a direct message sent now.
    await gqlOk(app, SendDirectMessageDocument, { to: carol.login, content: 'barrier' }, alice.token);
    expect((await carolFeed.data()).inboxEvents.__typename).toBe('DirectMessageReceived');

    // An edit that adds carol tells carol, and not bob again.
    const edited = (await gqlOk(app, EditMessageDocument, { messageId: m.id, content: `@${bob.login} @${carol.login}.` }, alice.token)).editMessage;
    expect(edited.mentions.map((u) => u.login)).toEqual([bob.login, carol.login]);
    expect((await carolFeed.data()).inboxEvents).toMatchObject({ __typename: 'Mentioned', mentionedIn: { id: m.id } });

    // Barriers: the next event each of bob and dave receives is a direct message sent now.
    await gqlOk(app, SendDirectMessageDocument, { to: bob.login, content: 'barrier' }, alice.token);
    await gqlOk(app, SendDirectMessageDocument, { to: dave.login, content: 'barrier' }, alice.token);
    expect((await bobFeed.data()).inboxEvents.__typename).toBe('DirectMessageReceived');
    expect((await daveFeed.data()).inboxEvents.__typename).toBe('DirectMessageReceived');
  });
});

describe('an edit whose mention rows were lost', () => {
  it('is completed by its retry: the rows of whom it mentions, and of whom it no longer does', async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const m = await post(app, alice, room, 'hello all');
    const mentionsOf = async (user: TestUser) => (await gqlOk(app, RoomReadStateDocument, { roomName: room }, user.token)).room!.readState!.mentionCount;

    // The edit applies, then its mention row for carol is not written: the request fails.
    const lostAdd = failNextStatement(app, /INSERT INTO room_mentions/);
    const mentioning = `hello @${carol.login}`;
    expect(codes(await gql(app, EditMessageDocument, { messageId: m.id, content: mentioning }, alice.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(lostAdd.fired()).toBe(true);
    expect(await mentionsOf(carol)).toBe(0);
    // The same edit again finishes it.
    expect((await gqlOk(app, EditMessageDocument, { messageId: m.id, content: mentioning }, alice.token)).editMessage.mentions.map((u) => u.login)).toEqual([carol.login]);
    expect(await mentionsOf(carol)).toBe(1);

    // And the other way: an edit that drops carol's mention, whose row's removal is lost.
    const lostRemoval = failNextStatement(app, /DELETE FROM room_mentions/);
    expect(codes(await gql(app, EditMessageDocument, { messageId: m.id, content: 'hello again' }, alice.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(lostRemoval.fired()).toBe(true);
    expect(await mentionsOf(carol)).toBe(1);
    await gqlOk(app, EditMessageDocument, { messageId: m.id, content: 'hello again' }, alice.token);
    expect(await mentionsOf(carol)).toBe(0);
    expect(await mentionsOf(bob)).toBe(0);
  });
});

describe('cost of the new connections', () => {
  const nested = (size: number) =>
    `query ($roomName: String!) { room(roomName: $roomName) { messages(first: 50) { edges { node { id
      edits(first: ${size}) { edges { node { content } } }
      replies(first: ${size}) { edges { node { id } } } } } } } }`;

  it('prices edits and replies by page size and reactions by their limit, like every other list', async () => {
    const room = await roomWith(app, alice);
    await post(app, alice, room, 'priced');
    // 50 messages × (edits 50 + replies 50): over the default cost limit of 5,000.
    const refused = await gql(app, nested(50), { roomName: room }, alice.token);
    expect(codes(refused)).toEqual(['QUERY_TOO_COMPLEX']);
    expect((await gql(app, nested(10), { roomName: room }, alice.token)).errors).toBeUndefined();
    // Reactions are priced at 20 kinds, each with its first reactors (a query each): 200 × (1 + 6 + 21) tips it over.
    const page = (withReactions: boolean) => `query ($roomName: String!) { room(roomName: $roomName) { messages(first: 200) { edges { node {
      replies(first: 5) { edges { node { id } } } ${withReactions ? 'reactions { emoji firstReactors { login } }' : ''} } } } } }`;
    expect((await gql(app, page(false), { roomName: room }, alice.token)).errors).toBeUndefined();
    expect(codes(await gql(app, page(true), { roomName: room }, alice.token))).toEqual(['QUERY_TOO_COMPLEX']);
  });
});

describe('what each action costs in CQL', () => {
  /** The statements `run` sends, each shortened to its verb and table. */
  async function statementsOf(run: () => Promise<unknown>) {
    const spy = recordCql(app);
    try {
      await run();
    } finally {
      spy.stop();
    }
    const short = (cql: string) => {
      const [verb, second] = cql.trim().split(/\s+/);
      const table = verb === 'UPDATE' ? second : cql.match(/\b(?:FROM|INTO) (\w+)/)?.[1];
      return `${verb} ${table}`;
    };
    return spy.records.map((r) => `${r.kind === 'lwt' ? 'LWT ' : ''}${r.cql.map(short).join(' + ')}`);
  }

  it('an edit, a reaction, a new kind of reaction and a reply', async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, bob, room, 'cost me');
    // Warm: the instance has written this room's and author's bucket rows already.
    const edit = await statementsOf(() => gqlOk(app, EditMessageDocument, { messageId: m.id, content: 'cost me less' }, bob.token));
    expect(edit).toEqual([
      'SELECT chat_room_messages',
      'SELECT chat_rooms',
      'INSERT message_versions',
      'LWT UPDATE chat_room_messages',
      'UPDATE messages_by_author',
      // The answer's own fields: none read storage (mentions and counts are in the row).
    ]);
    const firstOfKind = await statementsOf(() => gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👀' }, alice.token));
    // The message and its room; the reactor's name; the new kind (LWT); the reaction. Then the answer's
    // reactions: counts, the viewer's own, and the first reactors of the one emoji.
    const answer = ['SELECT message_reactions', 'SELECT message_reactions', 'SELECT message_reactions'];
    expect(firstOfKind).toEqual([
      'SELECT chat_room_messages',
      'SELECT chat_rooms',
      'SELECT users',
      'LWT UPDATE chat_room_messages',
      'INSERT message_reactions',
      ...answer,
    ]);
    const again = await statementsOf(() => gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👀' }, bob.token));
    expect(again).toEqual(['SELECT chat_room_messages', 'SELECT chat_rooms', 'SELECT users', 'INSERT message_reactions', ...answer]);
    // The room and the author's name; the parent; one logged batch; then the answer's replyTo (the parent again).
    const reply = await statementsOf(() => gqlOk(app, PostReplyDocument, { roomName: room, content: 'a reply', replyTo: m.id }, bob.token));
    expect(reply).toEqual([
      'SELECT chat_rooms',
      'SELECT users',
      'SELECT chat_room_messages',
      'INSERT chat_room_messages + INSERT message_replies + UPDATE chat_room_messages + INSERT messages_by_author',
      'SELECT chat_room_messages',
    ]);
  });
});
