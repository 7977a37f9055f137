/**
 * Per-room read state: the viewer's marker, unread and mention counts, over
 * HTTP against the real node, including racing posts and marks.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import {
  DeleteMessageDocument,
  HideMessageDocument,
  MarkRoomReadDocument,
  MarkRoomUnreadDocument,
  MyRoomListDocument,
  PostMessageDocument,
  RoomReadStateDocument,
} from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { messageKey, post, roomWith } from '../testkit/data/rooms.js';
import { recordCql } from '../testkit/faults/cql-spy.js';
import { seedHistory } from '../testkit/data/seed-history.js';
import { chatUser } from '../../src/resolvers/rooms/model.js';
import { cqlRows } from '../testkit/cql.js';

let app: App;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  app = await startApp();
  [alice, bob, carol] = await Promise.all([signUp(app), signUp(app), signUp(app)]);
});

const stateOf = async (user: TestUser, name: string) => (await gqlOk(app, RoomReadStateDocument, { roomName: name }, user.token)).room!.readState;

describe('room read state', () => {
  it('counts what others posted after the marker, moves forward only, and back only on purpose', async () => {
    const room = await roomWith(app, alice, [bob]);
    // Bob joined: everything before his join is read for him.
    expect(await stateOf(bob, room)).toMatchObject({ unreadCount: 0, unreadCapped: false, mentionCount: 0, firstUnreadMessage: null });
    const posts = [];
    for (let i = 0; i < 5; i++) posts.push(await post(app, alice, room, i % 2 ? `hey @${bob.login} ${i}` : `plain ${i}`));
    await post(app, bob, room, 'my own message does not count');
    const hidden = await post(app, alice, room, 'hidden later');
    await gqlOk(app, HideMessageDocument, { messageId: hidden.id }, alice.token);
    const deleted = await post(app, alice, room, `deleted later @${bob.login}`);
    await gqlOk(app, DeleteMessageDocument, { messageId: deleted.id }, alice.token);

    expect(await stateOf(bob, room)).toMatchObject({ unreadCount: 5, mentionCount: 2, firstUnreadMessage: { id: posts[0]!.id } });
    const marked = (await gqlOk(app, MarkRoomReadDocument, { roomName: room, upTo: posts[2]!.id }, bob.token)).markRoomRead;
    expect(marked).toMatchObject({ lastReadMessage: { id: posts[2]!.id }, firstUnreadMessage: { id: posts[3]!.id }, unreadCount: 2, mentionCount: 1 });
    // Never back: an older id changes nothing.
    expect((await gqlOk(app, MarkRoomReadDocument, { roomName: room, upTo: posts[0]!.id }, bob.token)).markRoomRead.lastReadMessage?.id).toBe(posts[2]!.id);
    // Unless on purpose: from posts[1] on is unread again.
    const unread = (await gqlOk(app, MarkRoomUnreadDocument, { roomName: room, from: posts[1]!.id }, bob.token)).markRoomUnread;
    expect(unread).toMatchObject({ lastReadMessage: { id: posts[0]!.id }, firstUnreadMessage: { id: posts[1]!.id }, unreadCount: 4, mentionCount: 2 });
    // Alice's own state is her own: of all that, only Bob's message is unread for her.
    expect(await stateOf(alice, room)).toMatchObject({ unreadCount: 1, mentionCount: 0, lastReadMessage: null });
  });

  it('shows every room of a room list with its counts, in one request', async () => {
    const rooms = [await roomWith(app, carol, [alice]), await roomWith(app, carol, [alice])];
    await post(app, carol, rooms[0]!, 'one');
    await post(app, carol, rooms[1]!, `two @${alice.login}`);
    await post(app, carol, rooms[1]!, 'three');
    const list = (await gqlOk(app, MyRoomListDocument, {}, alice.token)).me!.chatRooms!;
    const byName = new Map(list.map((r) => [r.name, r.readState]));
    expect(byName.get(rooms[0]!)).toMatchObject({ unreadCount: 1, mentionCount: 0 });
    expect(byName.get(rooms[1]!)).toMatchObject({ unreadCount: 2, mentionCount: 1 });
  });

  it('gives the room list its first unread and last read messages, read in one batch of message reads', async () => {
    const rooms = [await roomWith(app, carol, [alice]), await roomWith(app, carol, [alice]), await roomWith(app, carol, [alice])];
    const firsts = [];
    for (const [i, room] of rooms.entries()) {
      const read = await post(app, carol, room, `read ${i}`);
      await gqlOk(app, MarkRoomReadDocument, { roomName: room, upTo: read.id }, alice.token);
      firsts.push(await post(app, carol, room, `unread ${i}`));
    }
    const spy = recordCql(app);
    let list;
    try {
      list = (await gqlOk(app, MyRoomListDocument, {}, alice.token)).me!.chatRooms!;
    } finally {
      spy.stop();
    }
    for (const [i, room] of rooms.entries()) {
      expect(list.find((r) => r.name === room)!.readState).toMatchObject({
        lastReadMessage: { content: `read ${i}` },
        firstUnreadMessage: { id: firsts[i]!.id, content: `unread ${i}`, author: { login: carol.login } },
        unreadCount: 1,
      });
    }
    // The last-read messages: one read of the message table per room, by id, all from one loader batch (the first
    // unread ones come from the walk that counts, with no read of their own).
    const byId = spy.statements().filter((c) => c.startsWith('SELECT') && c.includes('FROM chat_room_messages') && c.includes('message_id IN'));
    expect(byId).toHaveLength(list.filter((r) => r.readState?.lastReadMessage).length);
    expect(byId.length).toBeGreaterThanOrEqual(rooms.length);
  });

  it('leaves a hidden message out of the mention count, as it is out of the unread count', async () => {
    const room = await roomWith(app, alice, [bob]);
    const mention = await post(app, alice, room, `look @${bob.login}`);
    expect(await stateOf(bob, room)).toMatchObject({ unreadCount: 1, mentionCount: 1, firstUnreadMessage: { id: mention.id } });
    await gqlOk(app, HideMessageDocument, { messageId: mention.id }, alice.token);
    expect(await stateOf(bob, room)).toMatchObject({ unreadCount: 0, mentionCount: 0, firstUnreadMessage: null });
    const rows = async () => (await cqlRows(app, 'SELECT message_id FROM room_mentions WHERE login = ? AND room_name = ?', [bob.login, room])).length;
    expect(await rows()).toBe(0);
    // A mention row the hide failed to drop is not counted either: the count asks its message to count as unread.
    const other = await post(app, alice, room, `again @${bob.login}`);
    await app.services.stores.roomMessages.hide((await app.services.stores.roomMessages.byKey(room, messageKey(other.id).bucket, messageKey(other.id).messageId))!);
    expect(await rows()).toBe(1);
    expect(await stateOf(bob, room)).toMatchObject({ unreadCount: 0, mentionCount: 0 });
  });

  it('caps unreadCount at 999 and says so', async () => {
    const room = await roomWith(app, alice, [bob]);
    const incarnation = (await app.services.stores.rooms.byName(room))!;
    // After Bob's join (his marker), and within the few seconds ahead that reads allow for clock skew.
    const start = Date.now() + 1;
    await seedHistory(app, incarnation, chatUser(alice), Array.from({ length: 1005 }, (_, i) => new Date(start + i)));
    expect(await stateOf(bob, room)).toMatchObject({ unreadCount: 999, unreadCapped: true });
  });

  it('checks its input and who asks', async () => {
    const room = await roomWith(app, alice);
    const other = await roomWith(app, alice);
    const m = await post(app, alice, other, 'elsewhere');
    const wrongRoom = await gql(app, MarkRoomReadDocument, { roomName: room, upTo: m.id }, alice.token);
    expect([codes(wrongRoom), wrongRoom.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'upTo']);
    expect(codes(await gql(app, MarkRoomReadDocument, { roomName: room, upTo: 'nope' }, alice.token))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await gql(app, MarkRoomReadDocument, { roomName: other, upTo: m.id }, bob.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, RoomReadStateDocument, { roomName: other }, bob.token))).toEqual(['FORBIDDEN']);
  });

  it('posting in a room of many writes no row per participant: only one per person mentioned', async () => {
    const many = await Promise.all(Array.from({ length: 12 }, () => signUp(app)));
    const room = await roomWith(app, alice, many);
    await post(app, alice, room, 'warm the bucket rows');
    const spy = recordCql(app);
    try {
      await gqlOk(app, PostMessageDocument, { roomName: room, content: `hello @${many[0]!.login}` }, alice.token);
    } finally {
      spy.stop();
    }
    const written = spy.writes();
    expect(written.filter((c) => c.startsWith('INSERT INTO room_mentions'))).toHaveLength(1);
    expect(written.filter((c) => c.includes('room_read_markers'))).toEqual([]);
    expect(written).toHaveLength(3); // the message, the author's copy and the one mention row
  });
});

describe('read state under concurrency', () => {
  it('posts racing marks: the marker ends at the newest id marked and the counts stay exact', async () => {
    const room = await roomWith(app, alice, [bob]);
    const first = [];
    for (let i = 0; i < 10; i++) first.push(await post(app, alice, room, `early ${i} @${bob.login}`));
    // Bob marks each of the ten at once while Alice posts ten more, also at once.
    const [, later] = await Promise.all([
      Promise.all(first.map((m) => gqlOk(app, MarkRoomReadDocument, { roomName: room, upTo: m.id }, bob.token))),
      Promise.all(Array.from({ length: 10 }, (_, i) => post(app, alice, room, `late ${i}${i % 2 ? ` @${bob.login}` : ''}`))),
    ]);
    const state = await stateOf(bob, room);
    expect(state.lastReadMessage?.id).toBe(first.at(-1)!.id);
    expect(state.unreadCount).toBe(later.length);
    expect(state.mentionCount).toBe(5);
  });
});
