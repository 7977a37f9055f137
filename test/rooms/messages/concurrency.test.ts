/**
 * The invariants of message actions under many concurrent clients, against
 * the real node and two instances sharing Redis: racing edits, an edit racing
 * a deletion, fifty people reacting at once, new emoji and pins racing their
 * limits, a thread of 5,000 replies paged to its end, and every new kind of
 * event crossing instances in order.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import {
  AddReactionDocument,
  DeleteMessageDocument,
  EditMessageDocument,
  InboxEventsDocument,
  MessageReactionsDocument,
  MessageWithEditsDocument,
  PinMessageDocument,
  PinnedMessagesDocument,
  PostReplyDocument,
  RemoveReactionDocument,
  RoomActionEventsDocument,
  ThreadDocument,
  UnpinMessageDocument,
} from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { signUp, signUpMany, type TestUser } from '../../testkit/data/users.js';
import { messageKey, post, roomWith } from '../../testkit/data/rooms.js';
import { cqlRow, cqlRows } from '../../testkit/cql.js';
import { recordCql } from '../../testkit/faults/cql-spy.js';
import { inboxFeed, roomFeed } from '../../testkit/feeds.js';
import { onNextStatement } from '../../testkit/faults/statement-faults.js';
import { newMessage } from '../../../src/resolvers/rooms/model.js';
import { chatUser } from '../../../src/resolvers/rooms/model.js';
import { encodeMessageId } from '../../../src/resolvers/rooms/ids.js';

let a: App;
let b: App;
let alice: TestUser;
let people: TestUser[];

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  alice = await signUp(a, { firstname: 'Alice' });
  people = await signUpMany(a, 50, 'reactor');
});

/** Alternates the two instances, so races also run across them. */
const either = (i: number) => (i % 2 === 0 ? a : b);

describe('edits racing each other', () => {
  it('20 concurrent edits: each accepted edit appears exactly once, the highest version is the content', async () => {
    const room = await roomWith(a, alice);
    const m = await post(a, alice, room, 'original');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => gql(either(i), EditMessageDocument, { messageId: m.id, content: `edit ${i}` }, alice.token)),
    );
    const accepted = results.flatMap((r) => (r.data ? [r.data.editMessage] : []));
    // Losing the race several times over is CONFLICT, never anything else.
    expect(results.flatMap(codes).filter((c) => c !== 'CONFLICT')).toEqual([]);
    expect(accepted.length).toBeGreaterThan(0);
    const byVersion = new Map(accepted.map((e) => [e.version, e.content]));
    // Versions 1..k, one per accepted edit.
    expect([...byVersion.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: accepted.length }, (_, i) => i + 1));

    const read = (await gqlOk(a, MessageWithEditsDocument, { messageId: m.id, first: 50 }, alice.token)).message!;
    const k = accepted.length;
    expect(read.version).toBe(k);
    expect(read.content).toBe(byVersion.get(k));
    expect(read.edits.edges.map((e) => [e.node.version, e.node.content])).toEqual([
      ...Array.from({ length: k - 1 }, (_, i) => [k - 1 - i, byVersion.get(k - 1 - i)]),
      [0, 'original'],
    ]);
    // No refused edit left a trace.
    const refused = results.flatMap((r, i) => (r.data ? [] : [`edit ${i}`]));
    const everything = [read.content, ...read.edits.edges.map((e) => e.node.content)];
    for (const content of refused) expect(everything).not.toContain(content);
  });

  it('20 concurrent edits to one same content: one version made, and every answer is that version', async () => {
    const room = await roomWith(a, alice);
    const m = await post(a, alice, room, 'original');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => gql(either(i), EditMessageDocument, { messageId: m.id, content: 'agreed' }, alice.token)),
    );
    expect(results.flatMap(codes)).toEqual([]);
    expect(new Set(results.map((r) => `${r.data!.editMessage.version}:${r.data!.editMessage.content}`))).toEqual(new Set(['1:agreed']));
    const read = (await gqlOk(a, MessageWithEditsDocument, { messageId: m.id, first: 50 }, alice.token)).message!;
    expect(read).toMatchObject({ version: 1, content: 'agreed' });
    expect(read.edits.edges.map((e) => [e.node.version, e.node.content])).toEqual([[0, 'original']]);
  });
});

describe('an edit racing a deletion', () => {
  type Order = 'editFirst' | 'deleteFirst';

  /**
   * One round: an edit and a deletion of a fresh message on the two instances, at once or in the order `staged`
   * asks (the second one runs to its end just before the first one's LWT is sent). The content never comes back.
   */
  async function round(room: string, i: number, staged?: Order): Promise<Order> {
    const m = await post(a, alice, room, `round ${i}`);
    const [editOn, deleteOn] = [either(i), either(i + 1)];
    const edit = () => gql(editOn, EditMessageDocument, { messageId: m.id, content: `resurrected ${i}` }, alice.token);
    const del = () => gql(deleteOn, DeleteMessageDocument, { messageId: m.id }, alice.token);
    let edited: Awaited<ReturnType<typeof edit>> | undefined;
    let deleted: Awaited<ReturnType<typeof del>> | undefined;
    if (staged === 'deleteFirst') {
      onNextStatement(editOn, /SET content = \?, version = \?/, async () => void (deleted = await del()));
      edited = await edit();
    } else if (staged === 'editFirst') {
      onNextStatement(deleteOn, /SET deleted = true/, async () => void (edited = await edit()));
      deleted = await del();
    } else {
      [edited, deleted] = await Promise.all([edit(), del()]);
    }
    expect(deleted!.errors).toBeUndefined();
    if (edited!.errors) expect([codes(edited!), edited!.errors[0]?.extensions?.reason]).toEqual([['MESSAGE_NOT_EDITABLE'], 'DELETED']);
    const read = (await gqlOk(b, MessageWithEditsDocument, { messageId: m.id }, alice.token)).message!;
    expect(read).toMatchObject({ deleted: true, content: null, edits: { edges: [] } });
    const k = messageKey(m.id);
    const row = await cqlRow(a, 'SELECT content FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [k.roomName, k.bucket, k.messageId]);
    expect(row?.content ?? null).toBeNull();
    const copy = await cqlRow(a, 'SELECT content FROM messages_by_author WHERE author_login = ? AND time_bucket = ? AND message_id = ?', [alice.login, Math.floor(k.bucket / 100), k.messageId]);
    expect(copy?.content ?? null).toBeNull();
    const versions = await cqlRows(a, 'SELECT content FROM message_versions WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [k.roomName, k.bucket, k.messageId]);
    // Even a version row an edit wrote after the deletion dropped them is shadowed by the drop.
    expect(versions).toEqual([]);
    return edited!.data ? 'editFirst' : 'deleteFirst';
  }

  it('never brings the content back, whichever goes first (each order staged once, then 20 rounds at once)', async () => {
    const room = await roomWith(a, alice);
    expect(await round(room, 0, 'editFirst')).toBe('editFirst');
    expect(await round(room, 1, 'deleteFirst')).toBe('deleteFirst');
    for (let i = 2; i < 22; i++) await round(room, i);
  });
});

describe('reactions under concurrency', () => {
  it('50 people adding and removing at once end with exactly the set each left', async () => {
    const room = await roomWith(a, alice, people);
    const m = await post(a, alice, room, 'react, everyone');
    // Each person's own sequence, run in order; all people at once, on both instances.
    const plan = people.map((_, i) => [
      ['add', '👍'],
      ['add', '❤️'],
      ...(i % 2 ? [['remove', '👍']] : []),
      ...(i % 3 === 0 ? [['add', '👍']] : []),
      ...(i % 5 === 0 ? [['remove', '❤️']] : []),
    ]);
    await Promise.all(
      people.map(async (person, i) => {
        for (const [op, emoji] of plan[i]!) {
          const vars = { messageId: m.id, emoji: emoji! };
          if (op === 'add') await gqlOk(either(i), AddReactionDocument, vars, person.token);
          else await gqlOk(either(i), RemoveReactionDocument, vars, person.token);
        }
      }),
    );
    const expected = new Map<string, Set<string>>([['👍', new Set()], ['❤️', new Set()]]);
    people.forEach((person, i) => {
      for (const [op, emoji] of plan[i]!) {
        if (op === 'add') expected.get(emoji!)!.add(person.login);
        else expected.get(emoji!)!.delete(person.login);
      }
    });
    const reactions = (await gqlOk(b, MessageReactionsDocument, { messageId: m.id }, alice.token)).message!.reactions;
    expect(Object.fromEntries(reactions.map((r) => [r.emoji, r.count]))).toEqual({
      '👍': expected.get('👍')!.size,
      '❤️': expected.get('❤️')!.size,
    });
    const k = messageKey(m.id);
    const rows = await cqlRows(a, 'SELECT emoji, login FROM message_reactions WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [k.roomName, k.bucket, k.messageId]);
    for (const [emoji, logins] of expected) {
      expect(new Set(rows.filter((r) => r.emoji === emoji).map((r) => r.login)), emoji).toEqual(logins);
    }
    for (const [i, person] of people.entries()) {
      if (i % 7) continue; // a sample of viewers
      const mine = (await gqlOk(either(i), MessageReactionsDocument, { messageId: m.id }, person.token)).message!.reactions;
      for (const r of mine) expect(r.reactedByViewer, `${person.login} ${r.emoji}`).toBe(expected.get(r.emoji)!.has(person.login));
    }
  });

  it('ten new emoji racing for the last two kinds: exactly two get in', async () => {
    const room = await roomWith(a, alice, people.slice(0, 10));
    const m = await post(a, alice, room, 'nearly full');
    const first18 = ['😀', '😁', '😂', '🤣', '😃', '😄', '😅', '😆', '😉', '😊', '😋', '😎', '😍', '😘', '🥰', '😗', '😙', '😚'];
    for (const emoji of first18) await gqlOk(a, AddReactionDocument, { messageId: m.id, emoji }, alice.token);
    const racers = ['🚀', '🌍', '🍕', '🎸', '⚽', '🐙', '🌵', '🎲', '🧩', '🛶'];
    const results = await Promise.all(
      racers.map((emoji, i) => gql(either(i), AddReactionDocument, { messageId: m.id, emoji }, people[i]!.token)),
    );
    expect(results.filter((r) => r.data)).toHaveLength(2);
    expect(results.flatMap(codes).filter((c) => c === 'LIMIT_REACHED')).toHaveLength(8);
    expect((await gqlOk(a, MessageReactionsDocument, { messageId: m.id }, alice.token)).message!.reactions).toHaveLength(20);
    const k = messageKey(m.id);
    const row = await cqlRow(a, 'SELECT reaction_kinds FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [k.roomName, k.bucket, k.messageId]);
    expect((row!.reaction_kinds as Set<string>).size).toBe(20);
  });
});

describe('pins racing the limit', () => {
  it('60 pins at once from both instances: exactly 50 are kept, each once', async () => {
    const room = await roomWith(a, alice);
    const messages = [];
    for (let i = 0; i < 60; i++) messages.push(await post(a, alice, room, `pin me ${i}`));
    const results = await Promise.all(messages.map((m, i) => gql(either(i), PinMessageDocument, { messageId: m.id }, alice.token)));
    const pinnedIds = results.flatMap((r) => (r.data ? [r.data.pinMessage.id] : []));
    expect(pinnedIds).toHaveLength(50);
    expect(results.flatMap(codes)).toEqual(Array(10).fill('LIMIT_REACHED'));
    const listed = (await gqlOk(b, PinnedMessagesDocument, { roomName: room }, alice.token)).room!.pinnedMessages.map((m) => m.id);
    expect(new Set(listed)).toEqual(new Set(pinnedIds));
    expect(listed).toHaveLength(50);
  });
});

describe('a thread of 5,000 replies', () => {
  it('pages to its end, in order, at one thread read plus one read per day spanned per page', async () => {
    const room = await roomWith(a, alice);
    const parent = await post(a, alice, room, 'a long thread');
    const parentKey = messageKey(parent.id);
    const incarnation = (await a.services.stores.rooms.byName(room))!;
    const author = chatUser({ login: alice.login, firstname: alice.firstname, lastname: alice.lastname });
    // Straight through the store (postMessage's own write path): one reply a minute, about three and a half days.
    const start = Date.parse(parent.createdAt);
    const replies = Array.from({ length: 5000 }, (_, i) =>
      newMessage(incarnation, new Date(start + (i + 1) * 60_000), author, `reply ${i}`, false, { replyTo: parentKey.messageId }),
    );
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < replies.length) await a.services.stores.roomMessages.insert(incarnation, replies[next++]!);
      }),
    );

    const seen: string[] = [];
    let after: string | null | undefined;
    let pages = 0;
    const perPage: Array<{ thread: number; days: number; all: number }> = [];
    for (;;) {
      const spy = recordCql(a);
      const page = (await gqlOk(a, ThreadDocument, { messageId: parent.id, first: 200, after }, alice.token)).message!;
      spy.stop();
      const statements = spy.statements();
      // Reads by id list: the page's replies (one per day) and, for their replyTo, their parent (one).
      const inReads = spy.records.filter((r) => r.cql[0]!.includes('message_id IN')).map((r) => r.params[0]![2] as string[]);
      perPage.push({
        thread: statements.filter((s) => s.includes('FROM message_replies') && !s.includes('COUNT')).length,
        days: inReads.filter((ids) => !ids.includes(parentKey.messageId)).length,
        all: statements.length,
      });
      expect(inReads.filter((ids) => ids.includes(parentKey.messageId))).toEqual([[parentKey.messageId]]);
      expect(page.replyCount).toBe(5000);
      seen.push(...page.replies.edges.map((e) => e.node.content!));
      pages += 1;
      if (!page.replies.pageInfo.hasNextPage) break;
      after = page.replies.pageInfo.endCursor;
    }
    expect(pages).toBe(25);
    expect(seen).toEqual(replies.map((r) => r.content));
    for (const p of perPage) {
      expect(p.thread).toBe(1);
      // 200 replies a minute apart span at most two UTC days.
      expect(p.days).toBeGreaterThanOrEqual(1);
      expect(p.days).toBeLessThanOrEqual(2);
      // message(id): the parent and its room; replies: the room (reader check), the thread, its days;
      // replyCount: one count; every reply's replyTo: one batched read of the parent.
      expect(p.all).toBe(6 + p.days);
    }
    expect(encodeMessageId(parentKey)).toBe(parent.id);
  });
});

describe('events across instances', () => {
  it('every new kind posted on A reaches a subscriber on B, in the order it happened', async () => {
    const bob = people[0]!;
    const room = await roomWith(a, alice, [bob]);
    const feed = await roomFeed(b, bob.token, RoomActionEventsDocument, { roomName: room });
    const bobsInbox = await inboxFeed(b, bob, InboxEventsDocument);

    const m = await post(a, alice, room, 'first');
    await gqlOk(a, EditMessageDocument, { messageId: m.id, content: `now with @${bob.login}` }, alice.token);
    await gqlOk(a, PinMessageDocument, { messageId: m.id }, alice.token);
    const reply = (await gqlOk(a, PostReplyDocument, { roomName: room, content: 'a reply', replyTo: m.id }, alice.token)).postMessage;
    await gqlOk(a, UnpinMessageDocument, { messageId: m.id }, alice.token);
    await gqlOk(a, AddReactionDocument, { messageId: m.id, emoji: '🎉' }, alice.token);
    const seen = [];
    for (let i = 0; i < 6; i++) seen.push((await feed.data()).roomEvents);
    await gqlOk(a, DeleteMessageDocument, { messageId: m.id }, alice.token);
    seen.push((await feed.data()).roomEvents);

    expect(seen.map((e) => e.__typename)).toEqual([
      'MessagePosted',
      'MessageEdited',
      'MessagePinned',
      'MessagePosted',
      'MessageUnpinned',
      'ReactionChanged',
      'MessageDeleted',
    ]);
    expect(seen.map((e) => ('message' in e ? e.message.id : null))).toEqual([m.id, m.id, m.id, reply.id, m.id, m.id, m.id]);
    expect(seen[5]).toMatchObject({ reactions: [{ emoji: '🎉', count: 1 }] });
    expect((await bobsInbox.data()).inboxEvents).toMatchObject({ __typename: 'Mentioned', mentionedIn: { id: m.id } });
  });
});
