// Rooms: creating, joining, leaving, listing and deleting them, over HTTP against the real node.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import {
  CreateRoomDocument,
  DeleteRoomDocument,
  HideMessageDocument,
  HistoryDocument,
  JoinRoomDocument,
  LeaveRoomDocument,
  MessageDocument,
  MyChatRoomsDocument,
  MyMessagesDocument,
  OtherUserRoomsDocument,
  PostMessageDocument,
  RoomDocument,
  RoomParticipantsFullDocument,
  RoomsDocument,
} from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { Limits } from '../../src/limits.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { signUp, signUpMany, type TestUser } from '../testkit/data/users.js';
import { messageKey, post, rawChatRooms, rawRoomRow, roomWith, uniqueRoomName } from '../testkit/data/rooms.js';
import { monthOfDay } from '../../src/buckets.js';
import { cqlRow, cqlRows } from '../testkit/cql.js';
import { recordCql } from '../testkit/faults/cql-spy.js';

let app: App;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

/** Real time, moved ahead on demand: lets posted messages settle for catch-up pages without waiting. */
const clock = { ahead: 0, now: () => new Date(Date.now() + clock.ahead) };

beforeAll(async () => {
  app = await startApp({ clock });
  [alice, bob, carol] = await Promise.all([
    signUp(app, { firstname: 'Alice', lastname: 'Liddell' }),
    signUp(app, { firstname: 'Bob', lastname: 'Builder' }),
    signUp(app, { firstname: 'Carol', lastname: 'Danvers' }),
  ]);
});

/** Rows of chat_rooms that are not rooms (no creation date or creator: the leftovers of lost races), counted over the whole table. */
/** Rows the room list walks past without listing them: debris of lost races, and private rooms (unlisted). */
async function unlistedRows(db: App['services']['db']['client']): Promise<number> {
  let count = 0;
  const rows = db.stream('SELECT creation_date, creator_login, visibility FROM chat_rooms', [], { prepare: true, fetchSize: 5000, autoPage: true });
  for await (const row of rows as unknown as AsyncIterable<{ creation_date: Date | null; creator_login: string | null; visibility: string | null }>) {
    if (!row.creation_date || !row.creator_login || row.visibility === 'PRIVATE') count += 1;
  }
  return count;
}

async function history(user: TestUser, name: string, args: { first?: number; after?: string; last?: number; before?: string }) {
  const data = await gqlOk(app, HistoryDocument, { roomName: name, ...args }, user.token);
  return data.room!.messages;
}

describe('createRoom', () => {
  it('makes the creator its first participant and lists the room in their chat rooms', async () => {
    const name = uniqueRoomName('Games');
    const { createRoom } = await gqlOk(app, CreateRoomDocument, { input: { name, banner: '  Board games only  ' } }, alice.token);
    expect(createRoom).toMatchObject({
      name: name.toLowerCase(),
      banner: 'Board games only',
      creator: { login: alice.login, firstname: 'Alice', lastname: 'Liddell' },
      participants: [{ login: alice.login, displayName: 'Alice Liddell' }],
      participantCount: 1,
    });
    const mine = await gqlOk(app, MyChatRoomsDocument, {}, alice.token);
    expect(mine.me?.chatRooms?.map((r) => r.name)).toContain(name.toLowerCase());
    const read = await gqlOk(app, RoomDocument, { roomName: name }, bob.token);
    expect(read.room).toEqual(createRoom);
  });

  it('gives ROOM_EXISTS for a taken name, whatever its case, and leaves the room as it was', async () => {
    const name = await roomWith(app, alice);
    const taken = await gql(app, CreateRoomDocument, { input: { name: name.toUpperCase(), banner: 'mine now' } }, bob.token);
    expect(codes(taken)).toEqual(['ROOM_EXISTS']);
    expect(taken.errors?.[0]?.extensions?.field).toBe('input.name');
    const room = await gqlOk(app, RoomDocument, { roomName: name }, bob.token);
    expect(room.room).toMatchObject({ banner: null, creator: { login: alice.login }, participantCount: 1 });
    expect(await rawChatRooms(app, bob.login)).not.toContain(name);
  });

  it.each([
    ['input.name', { name: 'ab' }],
    ['input.name', { name: 'x'.repeat(32) }],
    ['input.name', { name: '_leading' }],
    ['input.name', { name: '.leading' }],
    ['input.name', { name: 'has space' }],
    ['input.name', { name: 'émoji' }],
    ['input.name', { name: 'semi;colon' }],
    ['input.banner', { banner: 'b'.repeat(281) }],
  ])('names %s in BAD_USER_INPUT (%j)', async (field, patch) => {
    const res = await gql(app, CreateRoomDocument, { input: { name: uniqueRoomName(), ...patch } }, alice.token);
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
    expect(res.errors?.[0]?.extensions?.field).toBe(field);
  });

  it('accepts the edges of the rules: 3 and 31 characters, digits first, _ . - inside, a 280-character banner', async () => {
    for (const name of [`a${uniqueRoomName().slice(-2)}`, `9${uniqueRoomName('x'.repeat(20))}`.slice(0, 31), `r_.-${uniqueRoomName()}`.slice(0, 31)]) {
      const res = await gqlOk(app, CreateRoomDocument, { input: { name, banner: 'b'.repeat(280) } }, alice.token);
      expect(res.createRoom.name).toBe(name);
    }
  });

  it('needs a session', async () => {
    expect(codes(await gql(app, CreateRoomDocument, { input: { name: uniqueRoomName() } }))).toEqual(['UNAUTHENTICATED']);
    expect(codes(await gql(app, RoomsDocument, {}))).toEqual(['UNAUTHENTICATED']);
  });
});

describe('joinRoom and leaveRoom', () => {
  it('joins once, announcing it, and a second join changes nothing', async () => {
    const name = await roomWith(app, alice);
    const joined = await gqlOk(app, JoinRoomDocument, { roomName: name }, bob.token);
    expect(joined.joinRoom.participants.map((p) => p.login).sort()).toEqual([alice.login, bob.login].sort());
    const again = await gqlOk(app, JoinRoomDocument, { roomName: name }, bob.token);
    expect(again.joinRoom.participantCount).toBe(2);

    const page = await history(alice, name, {});
    expect(page.edges.map((e) => [e.node.content, e.node.systemMessage, e.node.author.login])).toEqual([
      ['Bob Builder joins the room', true, bob.login],
    ]);
    expect(await rawChatRooms(app, bob.login)).toContain(name);
  });

  it('gives NOT_FOUND for a room that does not exist, and writes nothing for it', async () => {
    const name = uniqueRoomName('ghost');
    expect(codes(await gql(app, JoinRoomDocument, { roomName: name }, bob.token))).toEqual(['NOT_FOUND']);
    expect(await rawRoomRow(app, name)).toBeNull();
    expect(await rawChatRooms(app, bob.login)).not.toContain(name);
  });

  it('leaves: out of the participants and the chat rooms, announced, and no more posting or reading', async () => {
    const name = await roomWith(app, alice, [bob]);
    expect((await gqlOk(app, LeaveRoomDocument, { roomName: name }, bob.token)).leaveRoom).toBe(true);
    const room = await gqlOk(app, RoomDocument, { roomName: name }, alice.token);
    expect(room.room?.participants.map((p) => p.login)).toEqual([alice.login]);
    expect(await rawChatRooms(app, bob.login)).not.toContain(name);
    const page = await history(alice, name, {});
    expect(page.edges[0]?.node).toMatchObject({ content: 'Bob Builder leaves the room', systemMessage: true });

    expect(codes(await gql(app, PostMessageDocument, { roomName: name, content: 'still here?' }, bob.token))).toEqual([
      'FORBIDDEN',
    ]);
    expect(codes(await gql(app, HistoryDocument, { roomName: name }, bob.token))).toEqual(['FORBIDDEN']);
    // Leaving again is harmless.
    expect((await gqlOk(app, LeaveRoomDocument, { roomName: name }, bob.token)).leaveRoom).toBe(false);
    expect(codes(await gql(app, LeaveRoomDocument, { roomName: uniqueRoomName('none') }, bob.token))).toEqual(['NOT_FOUND']);
  });
});

describe('a full room', () => {
  it(`refuses joins with LIMIT_REACHED at ${Limits.room.maxParticipants} participants, changing nothing; members still rejoin harmlessly`, async () => {
    const name = await roomWith(app, alice, [bob]);
    // Fill it up to the limit in one write (registering a thousand users would test registration).
    const extra = Array.from({ length: Limits.room.maxParticipants - 2 }, (_, i) => ({
      login: `filler_${i}`,
      firstname: 'Filler',
      lastname: String(i),
    }));
    await cqlRows(app, 'UPDATE chat_rooms SET participants = participants + ? WHERE room_name = ?', [new Set(extra), name]);
    expect((await gqlOk(app, RoomDocument, { roomName: name }, alice.token)).room?.participantCount).toBe(Limits.room.maxParticipants);

    const refused = await gql(app, JoinRoomDocument, { roomName: name }, carol.token);
    expect([codes(refused), refused.errors?.[0]?.extensions?.limit, refused.errors?.[0]?.extensions?.max]).toEqual([
      ['LIMIT_REACHED'],
      'PARTICIPANTS_PER_ROOM',
      Limits.room.maxParticipants,
    ]);
    expect((await gqlOk(app, RoomDocument, { roomName: name }, alice.token)).room?.participantCount).toBe(Limits.room.maxParticipants);
    expect(await rawChatRooms(app, carol.login)).not.toContain(name);
    expect((await history(alice, name, {})).edges.map((e) => e.node.content)).not.toContain('Carol Danvers joins the room');

    // Someone already in it joins again: harmless, as ever.
    expect((await gqlOk(app, JoinRoomDocument, { roomName: name }, bob.token)).joinRoom.participantCount).toBe(Limits.room.maxParticipants);
    // Once someone leaves, there is room again.
    await gqlOk(app, LeaveRoomDocument, { roomName: name }, bob.token);
    expect((await gqlOk(app, JoinRoomDocument, { roomName: name }, carol.token)).joinRoom.participantCount).toBe(Limits.room.maxParticipants);
  });

  it('lets a participant post reading only their own entries of the participants, and finds mentions among all of them', async () => {
    const name = await roomWith(app, alice, [bob]);
    const extra = Array.from({ length: Limits.room.maxParticipants - 2 }, (_, i) => ({ login: `filler_${i}`, firstname: 'Filler', lastname: String(i) }));
    await cqlRows(app, 'UPDATE chat_rooms SET participants = participants + ? WHERE room_name = ?', [new Set(extra), name]);
    const spy = recordCql(app);
    try {
      await post(app, bob, name, 'plain words, nobody named');
    } finally {
      spy.stop();
    }
    const roomReads = spy.records.filter((r) => r.cql[0]!.includes('FROM chat_rooms'));
    expect(roomReads).toHaveLength(1);
    // The participants column is never asked for whole: a slice of it, bounded by bob's login.
    expect(roomReads[0]!.cql[0]).toMatch(/participants\[\?\.\.\?\]/);
    expect(roomReads[0]!.cql[0]).not.toMatch(/participants\s*(,|FROM)/);
    expect(roomReads[0]!.params[0]!.slice(0, 2)).toEqual([{ login: bob.login }, { login: `${bob.login}\u0000` }]);
    // A post that may mention someone reads them all, and finds the one named.
    const mentioning = await gql(app, 'mutation ($r: String!) { postMessage(roomName: $r, content: "ping @filler_731 and @nobody_here") { mentions { login } } }', { r: name }, bob.token);
    expect(mentioning.data).toEqual({ postMessage: { mentions: [{ login: 'filler_731' }] } });
  });

  it('tells a participant by their exact login, whatever their entry says of their name and whatever logins sort beside it', async () => {
    const name = await roomWith(app, alice);
    // Entries that sort right before and after carol's own, and bob's entry under a name he no longer has.
    const neighbours = [carol.login.slice(0, -1), `${carol.login}.`, `${carol.login}_`, `${carol.login}0`].map((login) => ({ login, firstname: 'N', lastname: 'N' }));
    await cqlRows(app, 'UPDATE chat_rooms SET participants = participants + ? WHERE room_name = ?', [
      new Set([...neighbours, { login: bob.login, firstname: 'Robert', lastname: null }]),
      name,
    ]);
    expect(codes(await gql(app, PostMessageDocument, { roomName: name, content: 'may I?' }, carol.token))).toEqual(['FORBIDDEN']);
    expect((await post(app, bob, name, 'I may')).content).toBe('I may');
    await gqlOk(app, JoinRoomDocument, { roomName: name }, carol.token);
    expect((await post(app, carol, name, 'now I may')).content).toBe('now I may');
    expect(codes(await gql(app, PostMessageDocument, { roomName: uniqueRoomName('nowhere'), content: 'hello?' }, carol.token))).toEqual(['NOT_FOUND']);
  });

  it('prices the participants list at its bound, so nested selections under it cannot hide their cost', async () => {
    const name = await roomWith(app, alice);
    const query = `query ($roomName: String!) { room(roomName: $roomName) { participants { messages(first: 5) { edges { node { id } } } } } }`;
    const res = await gql(app, query, { roomName: name }, alice.token);
    expect(codes(res)).toEqual(['QUERY_TOO_COMPLEX']);
    // The participants themselves, from the room row, stay cheap.
    expect((await gqlOk(app, RoomParticipantsFullDocument, { roomName: name }, alice.token)).room?.participants).toHaveLength(1);
  });
});

describe('deleteRoom', () => {
  it('is for the creator only', async () => {
    const name = await roomWith(app, alice, [bob]);
    expect(codes(await gql(app, DeleteRoomDocument, { roomName: name }, bob.token))).toEqual(['FORBIDDEN']);
    expect((await gqlOk(app, RoomDocument, { roomName: name }, bob.token)).room?.name).toBe(name);
    expect(codes(await gql(app, DeleteRoomDocument, { roomName: uniqueRoomName('none') }, alice.token))).toEqual(['NOT_FOUND']);
  });

  it("removes the room, its participants' entries, its history and the authors' copies", async () => {
    const name = await roomWith(app, alice, [bob, carol]);
    const posted = await post(app, bob, name, 'soon gone');
    expect((await gqlOk(app, DeleteRoomDocument, { roomName: name }, alice.token)).deleteRoom).toBe(true);

    expect((await gqlOk(app, RoomDocument, { roomName: name }, alice.token)).room).toBeNull();
    expect(await rawRoomRow(app, name)).toBeNull();
    for (const u of [alice, bob, carol]) expect(await rawChatRooms(app, u.login)).not.toContain(name);
    const db = app.services.db.client;
    expect((await db.execute('SELECT time_bucket FROM messages_bucket WHERE room_name = ?', [name], { prepare: true })).rowLength).toBe(0);
    const bucket = Number(posted.createdAt.slice(0, 10).replaceAll('-', ''));
    const left = await db.execute('SELECT message_id FROM chat_room_messages WHERE room_name = ? AND time_bucket = ?', [name, bucket], {
      prepare: true,
    });
    expect(left.rowLength).toBe(0);
    expect((await gqlOk(app, MessageDocument, { messageId: posted.id }, bob.token)).message).toBeNull();
    // me.messages serves the room messages themselves (a gone room's are left out either way): the copy is read as stored.
    const { messageId } = messageKey(posted.id);
    const copy = await cqlRow(app, 'SELECT message_id FROM messages_by_author WHERE author_login = ? AND time_bucket = ? AND message_id = ?', [
      bob.login,
      monthOfDay(bucket),
      messageId,
    ]);
    expect(copy).toBeUndefined();
  });

  it('lets the name be used again, by a new room with an empty history', async () => {
    const name = await roomWith(app, alice, [bob]);
    await post(app, bob, name, 'from the first room');
    await gqlOk(app, DeleteRoomDocument, { roomName: name }, alice.token);
    await gqlOk(app, CreateRoomDocument, { input: { name } }, carol.token);
    const page = await history(carol, name, {});
    expect(page.edges).toEqual([]);
  });
});

describe('room, rooms, participants', () => {
  it('resolves participants from the room row, loading the other user fields only when asked', async () => {
    const name = await roomWith(app, alice, [bob]);
    const before = app.services.db.queryCount;
    await gqlOk(app, RoomDocument, { roomName: name }, carol.token);
    // The room row, nothing per participant (the session check reads no table).
    expect(app.services.db.queryCount - before).toBe(1);

    const full = await gqlOk(app, RoomParticipantsFullDocument, { roomName: name }, bob.token);
    const byLogin = new Map(full.room!.participants.map((p) => [p.login, p]));
    expect(byLogin.get(bob.login)?.email).toBe(bob.email);
    expect(byLogin.get(alice.login)?.email).toBeNull();
    expect(new Date(byLogin.get(alice.login)!.createdAt).getTime()).toBeGreaterThan(0);
  });

  it('pages through every room, each exactly once, from end cursors and from edge cursors', async () => {
    const ours = new Set<string>();
    for (let i = 0; i < 5; i++) ours.add(await roomWith(app, carol, [], uniqueRoomName('list')));
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const { rooms } = await gqlOk(app, RoomsDocument, { first: 2, after }, alice.token);
      seen.push(...rooms.edges.map((e) => e.node.name));
      if (!rooms.pageInfo.hasNextPage) break;
      after = rooms.pageInfo.endCursor!;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const name of ours) expect(seen).toContain(name);

    // Resuming after a middle edge gives the rooms that followed it.
    const page = await gqlOk(app, RoomsDocument, { first: 3 }, alice.token);
    const middle = page.rooms.edges[0]!;
    const next = await gqlOk(app, RoomsDocument, { first: 2, after: middle.cursor }, alice.token);
    expect(next.rooms.edges.map((e) => e.node.name)).toEqual(page.rooms.edges.slice(1, 3).map((e) => e.node.name));

    const bad = await gql(app, RoomsDocument, { first: 2, after: 'garbage' }, alice.token);
    expect(codes(bad)).toEqual(['BAD_USER_INPUT']);
    expect(bad.errors?.[0]?.extensions?.field).toBe('after');
    for (const r of ['no', 'Upper-Case', 'x'.repeat(32), 42]) {
      const forged = Buffer.from(JSON.stringify({ v: 1, r })).toString('base64url');
      expect(codes(await gql(app, RoomsDocument, { first: 2, after: forged }, alice.token)), String(r)).toEqual(['BAD_USER_INPUT']);
    }
    expect(codes(await gql(app, RoomsDocument, { first: 201 }, alice.token))).toEqual(['BAD_USER_INPUT']);
  });

  it('chains edge cursors across more than ten full pages: every room once, one read per page (and one per debris row)', async () => {
    // 2,300 rooms written straight into the table (creating them through the API would test createRoom),
    // and a few rows of debris (participants only, the leftovers of a lost race) that are not rooms.
    const prefix = uniqueRoomName('walk').slice(0, 20);
    const names = Array.from({ length: 2300 }, (_, i) => `${prefix}-${i}`);
    const debris = Array.from({ length: 5 }, (_, i) => `${prefix}-debris${i}`);
    const carolUdt = { login: carol.login, firstname: 'Carol', lastname: 'Danvers' };
    const db = app.services.db.client;
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < names.length) {
          const name = names[next++]!;
          await db.execute(
            'INSERT INTO chat_rooms (room_name, creation_date, creator, creator_login, participants) VALUES (?, ?, ?, ?, ?)',
            [name, new Date(), carolUdt, carol.login, new Set([carolUdt])],
            { prepare: true },
          );
        }
      }),
    );
    for (const name of debris) {
      await db.execute('UPDATE chat_rooms SET participants = participants + ? WHERE room_name = ?', [new Set([carolUdt]), name], {
        prepare: true,
      });
    }

    // Each page is resumed from its second-to-last edge, as a client that showed only part of a page would.
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    const reads: number[] = [];
    // Only reads of the room list count: the instance's background jobs (presence, recoveries) may read
    // meanwhile, and the instance-wide query count once charged one of theirs to a page.
    const spy = recordCql(app);
    const listReads = () => spy.statements().filter((c) => /FROM chat_rooms (WHERE token\(room_name\)|LIMIT)/.test(c)).length;
    try {
      for (;;) {
        const before = listReads();
        const { rooms } = await gqlOk(app, RoomsDocument, { first: 200, after }, alice.token);
        reads.push(listReads() - before);
        pages += 1;
        const edges = rooms.edges;
        if (!rooms.pageInfo.hasNextPage) {
          seen.push(...edges.map((e) => e.node.name));
          break;
        }
        expect(edges).toHaveLength(200);
        seen.push(...edges.slice(0, -1).map((e) => e.node.name));
        after = edges.at(-2)!.cursor;
      }
    } finally {
      spy.stop();
    }
    expect(Math.min(...reads)).toBeGreaterThanOrEqual(1);
    expect(pages).toBeGreaterThan(11);
    // A page reads its rows once; a debris row (or a private room) inside it costs one read more to fill the page. Never a
    // re-read of earlier pages. The keyspace is shared with test files running meanwhile, whose races may leave debris and
    // private rooms of their own: the bound counts every such row the table holds once the walk is over (ours among them).
    const allDebris = await unlistedRows(db);
    expect(allDebris).toBeGreaterThanOrEqual(debris.length);
    expect(Math.max(...reads)).toBeLessThanOrEqual(1 + allDebris);
    expect(reads.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(pages + allDebris);
    expect(new Set(seen).size).toBe(seen.length);
    const ours = new Set(seen.filter((n) => n.startsWith(`${prefix}-`)));
    expect([...ours].sort()).toEqual([...names].sort());
  }, 120_000);

  it("shows chat rooms and messages to their owner only, and leaves deleted rooms out", async () => {
    const name = await roomWith(app, alice, [bob]);
    const seen = await gqlOk(app, OtherUserRoomsDocument, { login: bob.login }, alice.token);
    expect(seen.user).toMatchObject({ login: bob.login, chatRooms: null, messages: null });
    await gqlOk(app, DeleteRoomDocument, { roomName: name }, alice.token);
    const mine = await gqlOk(app, MyChatRoomsDocument, {}, bob.token);
    expect(mine.me?.chatRooms?.map((r) => r.name)).not.toContain(name);
  });
});

describe('postMessage and message', () => {
  it('posts as the logged-in user, trimmed, readable by id', async () => {
    const name = await roomWith(app, alice, [bob]);
    const m = await post(app, bob, name, '  hello there  ');
    expect(m).toMatchObject({ roomName: name, content: 'hello there', systemMessage: false, visible: true, author: { login: bob.login } });
    expect(Math.abs(new Date(m.createdAt).getTime() - clock.now().getTime())).toBeLessThan(60_000);
    const read = await gqlOk(app, MessageDocument, { messageId: m.id }, alice.token);
    expect(read.message).toEqual(m);
  });

  it('is for participants only, and so is reading a message by id', async () => {
    const name = await roomWith(app, alice);
    expect(codes(await gql(app, PostMessageDocument, { roomName: name, content: 'hi' }, bob.token))).toEqual(['FORBIDDEN']);
    const m = await post(app, alice, name, 'members only');
    expect(codes(await gql(app, MessageDocument, { messageId: m.id }, bob.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, PostMessageDocument, { roomName: uniqueRoomName('none'), content: 'hi' }, bob.token))).toEqual([
      'NOT_FOUND',
    ]);
  });

  it.each([
    ['content', { content: '   ' }],
    ['content', { content: 'c'.repeat(4001) }],
    ['clientMessageId', { clientMessageId: '' }],
    ['clientMessageId', { clientMessageId: 'i'.repeat(65) }],
    ['clientMessageId', { clientMessageId: 'line\nbreak' }],
    ['roomName', { roomName: 'no' }],
  ])('names %s in BAD_USER_INPUT (%j)', async (field, patch) => {
    const name = await roomWith(app, alice);
    const res = await gql(app, PostMessageDocument, { roomName: name, content: 'ok', ...patch }, alice.token);
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
    expect(res.errors?.[0]?.extensions?.field).toBe(field);
    expect((await history(alice, name, {})).edges).toEqual([]);
  });

  it('accepts 4000 characters (counted as characters, not UTF-16 units)', async () => {
    const name = await roomWith(app, alice);
    const text = '😀'.repeat(4000);
    expect((await post(app, alice, name, text)).content).toBe(text);
  });

  it('refuses ids it did not make', async () => {
    for (const id of ['nope', Buffer.from('m1|room|20261301|x').toString('base64url')]) {
      const res = await gql(app, MessageDocument, { messageId: id }, alice.token);
      expect(codes(res)).toEqual(['BAD_USER_INPUT']);
      expect(res.errors?.[0]?.extensions?.field).toBe('messageId');
    }
  });

  it('returns the original message for a retry with the same clientMessageId, even with other content', async () => {
    const name = await roomWith(app, alice, [bob]);
    const first = (await gqlOk(app, PostMessageDocument, { roomName: name, content: 'once', clientMessageId: 'c-1' }, bob.token))
      .postMessage;
    const retry = (await gqlOk(app, PostMessageDocument, { roomName: name, content: 'twice', clientMessageId: 'c-1' }, bob.token))
      .postMessage;
    expect(retry).toEqual(first);
    // The same id from another author, or in another room, is another message.
    const other = (await gqlOk(app, PostMessageDocument, { roomName: name, content: 'mine', clientMessageId: 'c-1' }, alice.token))
      .postMessage;
    expect(other.id).not.toBe(first.id);
    const contents = (await history(alice, name, {})).edges.filter((e) => !e.node.systemMessage).map((e) => e.node.content);
    expect(contents).toEqual(['mine', 'once']);
    // The claim lives 24 hours, then the id may be used again.
    const claim = await cqlRow(
      app,
      'SELECT TTL(message_id) AS ttl FROM message_client_ids WHERE room_name = ? AND author_login = ? AND client_message_id = ?',
      [name, bob.login, 'c-1'],
    );
    expect(claim?.ttl).toBeGreaterThan(86_400 - 120);
    expect(claim?.ttl).toBeLessThanOrEqual(86_400);
  });

  it('forgets a clientMessageId with its room: in a room re-created under the same name, the id posts a new message', async () => {
    const name = await roomWith(app, alice, [bob]);
    const send = async (content: string) =>
      (await gqlOk(app, PostMessageDocument, { roomName: name, content, clientMessageId: 'c-again' }, bob.token)).postMessage;
    const old = await send('in the first room');
    await gqlOk(app, DeleteRoomDocument, { roomName: name }, alice.token);
    await roomWith(app, alice, [bob], name);

    const fresh = await send('in the second room');
    expect(fresh.id).not.toBe(old.id);
    expect(fresh).toMatchObject({ content: 'in the second room', roomName: name });
    const contents = (await history(alice, name, {})).edges.filter((e) => !e.node.systemMessage).map((e) => e.node.content);
    expect(contents).toEqual(['in the second room']);
    // And within the new room, the id is idempotent again.
    expect(await send('a retry')).toEqual(fresh);
  });
});

describe('Room.messages', () => {
  it('pages newest first and back again without repeats or gaps, while new messages arrive', async () => {
    const name = await roomWith(app, alice);
    const sent: string[] = [];
    for (let i = 0; i < 7; i++) sent.push((await post(app, alice, name, `m${i}`)).content!);

    const p1 = await history(alice, name, { first: 3 });
    expect(p1.edges.map((e) => e.node.content)).toEqual(['m6', 'm5', 'm4']);
    expect(p1.pageInfo.hasNextPage).toBe(true);
    await post(app, alice, name, 'late-1'); // arrives between pages
    const p2 = await history(alice, name, { first: 3, after: p1.pageInfo.endCursor! });
    expect(p2.edges.map((e) => e.node.content)).toEqual(['m3', 'm2', 'm1']);
    const p3 = await history(alice, name, { first: 3, after: p2.pageInfo.endCursor! });
    expect(p3.edges.map((e) => e.node.content)).toEqual(['m0']);
    expect(p3.pageInfo.hasNextPage).toBe(false);

    await post(app, alice, name, 'late-2');
    // Catch-up shows the latest at once, unsettled as they are...
    const fresh = await history(alice, name, { last: 50 });
    expect(fresh.edges.map((e) => e.node.content)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'late-1', 'late-2']);
    // ...and its cursor resumes from before them, so a write still in flight cannot be stepped over.
    const repeat = await history(alice, name, { last: 50, before: fresh.pageInfo.endCursor! });
    expect(repeat.edges.map((e) => e.node.content)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'late-1', 'late-2']);
    clock.ahead += 60_000;

    // Oldest first, exactly, from catch-up cursors.
    const fromStart = await history(alice, name, { last: 4 });
    expect(fromStart.edges.map((e) => e.node.content)).toEqual(['m0', 'm1', 'm2', 'm3']);
    expect(fromStart.pageInfo.hasPreviousPage).toBe(true);
    const rest = await history(alice, name, { last: 3, before: fromStart.pageInfo.endCursor! });
    expect(rest.edges.map((e) => e.node.content)).toEqual(['m4', 'm5', 'm6']);
    const missed = await history(alice, name, { last: 3, before: rest.pageInfo.endCursor! });
    expect(missed.edges.map((e) => e.node.content)).toEqual(['late-1', 'late-2']);
    expect(missed.pageInfo.hasPreviousPage).toBe(false);

    // From the top of a newest-first page served before m6 settled, catch-up resumes from what had settled then:
    // it may repeat messages the client has, and never misses one.
    const again: string[] = [];
    let before = p1.edges[0]!.cursor;
    for (;;) {
      const page = await history(alice, name, { last: 2, before });
      again.push(...page.edges.map((e) => e.node.content!));
      if (!page.pageInfo.hasPreviousPage) break;
      before = page.pageInfo.endCursor!;
    }
    expect(new Set(again).size).toBe(again.length);
    expect(again.slice(again.indexOf('m6'))).toEqual(['m6', 'late-1', 'late-2']);
  });

  it('refuses mixed directions, bad sizes and bad cursors, naming the argument', async () => {
    const name = await roomWith(app, alice);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['first', { first: 2, last: 2 }],
      ['first', { first: 0 }],
      ['first', { first: 201 }],
      ['last', { last: 201 }],
      ['after', { after: 'zzz' }],
      ['before', { before: Buffer.from('{"v":1,"b":20261340,"t":"x"}').toString('base64url') }],
    ];
    for (const [field, args] of cases) {
      const res = await gql(app, HistoryDocument, { roomName: name, ...args }, alice.token);
      expect(codes(res), JSON.stringify(args)).toEqual(['BAD_USER_INPUT']);
      expect(res.errors?.[0]?.extensions?.field).toBe(field);
    }
  });
});

describe('hideMessage', () => {
  it('lets the author and the creator hide, nobody else; hidden content is null everywhere', async () => {
    const name = await roomWith(app, alice, [bob, carol]);
    const byBob = await post(app, bob, name, 'regrettable');
    const byCarol = await post(app, carol, name, 'off topic');

    expect(codes(await gql(app, HideMessageDocument, { messageId: byBob.id }, carol.token))).toEqual(['FORBIDDEN']);
    const hidden = (await gqlOk(app, HideMessageDocument, { messageId: byBob.id }, bob.token)).hideMessage;
    expect(hidden).toMatchObject({ id: byBob.id, visible: false, content: null });
    expect((await gqlOk(app, HideMessageDocument, { messageId: byCarol.id }, alice.token)).hideMessage.visible).toBe(false);

    const page = await history(carol, name, {});
    const shown = new Map(page.edges.map((e) => [e.node.id, e.node]));
    expect(shown.get(byBob.id)).toMatchObject({ content: null, visible: false });
    expect(shown.get(byCarol.id)).toMatchObject({ content: null, visible: false });
    expect((await gqlOk(app, MessageDocument, { messageId: byBob.id }, carol.token)).message?.content).toBeNull();
    const own = await gqlOk(app, MyMessagesDocument, { first: 1 }, bob.token);
    expect(own.me?.messages?.edges[0]?.node).toMatchObject({ id: byBob.id, content: null, visible: false });
    // Hiding again is harmless.
    expect((await gqlOk(app, HideMessageDocument, { messageId: byBob.id }, bob.token)).hideMessage.visible).toBe(false);
  });
});

describe('User.messages', () => {
  it("lists the user's own messages across rooms, newest first, without system messages", async () => {
    const [dave] = await signUpMany(app, 1, 'dave');
    const r1 = await roomWith(app, alice, [dave!]);
    const r2 = await roomWith(app, bob, [dave!]);
    const ids = [];
    for (const [room, text] of [[r1, 'a'], [r2, 'b'], [r1, 'c'], [r2, 'd'], [r1, 'e']] as const) {
      ids.push((await post(app, dave!, room, text)).id);
    }
    await post(app, alice, r1, 'not dave');
    const p1 = await gqlOk(app, MyMessagesDocument, { first: 3 }, dave!.token);
    expect(p1.me?.messages?.edges.map((e) => [e.node.content, e.node.roomName])).toEqual([
      ['e', r1],
      ['d', r2],
      ['c', r1],
    ]);
    const p2 = await gqlOk(app, MyMessagesDocument, { first: 3, after: p1.me!.messages!.pageInfo.endCursor }, dave!.token);
    expect(p2.me?.messages?.edges.map((e) => e.node.content)).toEqual(['b', 'a']);
    expect(p2.me?.messages?.pageInfo.hasNextPage).toBe(false);
    // Every id found through the author's list reads back through message(id).
    for (const id of ids) expect((await gqlOk(app, MessageDocument, { messageId: id }, dave!.token)).message?.id).toBe(id);
  });
});
