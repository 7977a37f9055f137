/**
 * A change of membership is whole only with its system message (and a join with the newcomer's read marker).
 * Requests are stopped at each step after listing the change (a join's LWT never sent; its message's write
 * lost; its marker's write lost; the message of a leave and of a removal lost): the job of another instance
 * completes each change that applied, exactly once, and drops the one that did not (taking the room back off that
 * user's list). The requests run on an instance whose clock is an hour behind, so their listings are past the
 * job's grace at once while no other test's fresh ones are.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { HistoryDocument, JoinRoomDocument, LeaveRoomDocument, RemoveParticipantDocument, RoomReadStateDocument } from '../generated/graphql.js';
import { ManualClock, startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { post, rawChatRooms, roomWith } from '../testkit/data/rooms.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { cqlRows } from '../testkit/cql.js';
import { eventually } from '../testkit/poll.js';
import { onNextStatement } from '../testkit/faults/statement-faults.js';

let behind: App;
let creator: TestUser;
beforeAll(async () => {
  behind = await startApp({ clock: new ManualClock(new Date(Date.now() - 3_600_000)) });
  creator = await signUp(behind);
});

/** The request stops here, as if its instance died: the statement is never sent. */
const lostAt = (pattern: RegExp) =>
  onNextStatement(behind, pattern, async () => {
    throw new Error('the instance was lost here');
  });

/** The room's entries in pending_room_notices: of joins unless `kind` says. */
async function pendingJoinsOf(room: string, kind = 'join') {
  const rows = [];
  for (const offset of [-1, 0, 1]) {
    const day = Number(new Date(Date.now() - 3_600_000 + offset * 86_400_000).toISOString().slice(0, 10).replaceAll('-', ''));
    rows.push(...(await cqlRows(behind, 'SELECT login, kind, message_id FROM pending_room_notices WHERE day = ? AND room_name = ?', [day, room])));
  }
  return rows.filter((r) => r.kind === kind).map((r) => ({ login: r.login as string, messageId: (r.message_id?.toString() as string | undefined) ?? null }));
}

/** The ids of the room's system messages about `user` that end with `saying`. */
async function systemMessagesOf(room: string, user: TestUser, saying: RegExp) {
  const edges = (await gqlOk(behind, HistoryDocument, { roomName: room, first: 50 }, creator.token)).room!.messages!.edges;
  return edges.filter((e) => e.node.systemMessage && e.node.author?.login === user.login && saying.test(e.node.content ?? '')).map((e) => e.node.id);
}

const joinMessagesOf = (room: string, user: TestUser) => systemMessagesOf(room, user, /joins the room$/);

const readStateOf = async (room: string, user: TestUser) => (await gqlOk(behind, RoomReadStateDocument, { roomName: room }, user.token)).room!.readState!;

describe('a change of membership left half done is completed by the job', () => {
  it('completes each join, leave and removal that applied exactly once, and drops the join that did not', async () => {
    // A whole join leaves nothing listed.
    const whole = await signUp(behind);
    const wholeRoom = await roomWith(behind, creator);
    await gqlOk(behind, JoinRoomDocument, { roomName: wholeRoom }, whole.token);
    expect(await pendingJoinsOf(wholeRoom)).toEqual([]);
    expect(await joinMessagesOf(wholeRoom, whole)).toHaveLength(1);

    // 1. The system message's write is lost: the join is answered (it applied), without its message.
    const [noMessage, noMarker, noJoin] = [await signUp(behind), await signUp(behind), await signUp(behind)];
    const roomA = await roomWith(behind, creator);
    await post(behind, creator, roomA, 'before the join');
    const lostMessage = lostAt(/INSERT INTO chat_room_messages/);
    expect((await gqlOk(behind, JoinRoomDocument, { roomName: roomA }, noMessage.token)).joinRoom.name).toBe(roomA);
    expect(lostMessage.fired()).toBe(true);
    expect(await joinMessagesOf(roomA, noMessage)).toEqual([]);
    expect(await readStateOf(roomA, noMessage)).toMatchObject({ lastReadMessage: null, firstUnreadMessage: { content: 'before the join' } });
    const [listedA] = await pendingJoinsOf(roomA);
    expect(listedA).toMatchObject({ login: noMessage.login, messageId: expect.any(String) });

    // 2. The message is written, the read marker's write is lost.
    const roomB = await roomWith(behind, creator);
    const lostMarker = lostAt(/UPDATE room_read_markers SET read_up_to/);
    await gqlOk(behind, JoinRoomDocument, { roomName: roomB }, noMarker.token);
    expect(lostMarker.fired()).toBe(true);
    const [writtenB] = await joinMessagesOf(roomB, noMarker);
    expect(writtenB).toBeDefined();
    expect(await pendingJoinsOf(roomB)).toEqual([{ login: noMarker.login, messageId: expect.any(String) }]);
    expect((await readStateOf(roomB, noMarker)).lastReadMessage).toBeNull();

    // 3. The join's LWT is never sent: the request fails, the join never applied.
    const roomC = await roomWith(behind, creator);
    const lostJoin = lostAt(/participants = participants \+ \?/);
    expect(codes(await gql(behind, JoinRoomDocument, { roomName: roomC }, noJoin.token))).toEqual(['INTERNAL_SERVER_ERROR']);
    expect(lostJoin.fired()).toBe(true);
    expect(await pendingJoinsOf(roomC)).toEqual([{ login: noJoin.login, messageId: null }]);
    // The request had put the room on the user's list before its LWT.
    expect(await rawChatRooms(behind, noJoin.login)).toContain(roomC);

    // 4. A leave and a removal whose messages are lost: they applied, the requests answer so.
    const [leaver, removed] = [await signUp(behind), await signUp(behind)];
    const roomD = await roomWith(behind, creator, [leaver, removed]);
    const lostLeave = lostAt(/INSERT INTO chat_room_messages/);
    expect((await gqlOk(behind, LeaveRoomDocument, { roomName: roomD }, leaver.token)).leaveRoom).toBe(true);
    expect(lostLeave.fired()).toBe(true);
    const lostRemoval = lostAt(/INSERT INTO chat_room_messages/);
    await gqlOk(behind, RemoveParticipantDocument, { roomName: roomD, login: removed.login, ban: true }, creator.token);
    expect(lostRemoval.fired()).toBe(true);
    expect(await systemMessagesOf(roomD, leaver, /leaves the room$/)).toEqual([]);
    expect(await systemMessagesOf(roomD, removed, /banned from the room$/)).toEqual([]);

    // Two instances with the job, started at once, settle the listings.
    await Promise.all([startApp(), startApp()]);
    const listings = async () => [
      ...(await Promise.all([roomA, roomB, roomC].map((room) => pendingJoinsOf(room)))),
      await pendingJoinsOf(roomD, 'leave'),
      await pendingJoinsOf(roomD, 'ban'),
    ];
    await eventually(async () => (await listings()).every((rows) => rows.length === 0), { what: 'the job to settle the listings', timeoutMs: 20_000 });
    expect(await systemMessagesOf(roomD, leaver, /^\S+ \S+ leaves the room$/)).toHaveLength(1);
    expect(await systemMessagesOf(roomD, removed, /^\S+ \S+ was banned from the room$/)).toHaveLength(1);

    const [messageA, ...moreA] = await joinMessagesOf(roomA, noMessage);
    expect(moreA).toEqual([]);
    expect(await readStateOf(roomA, noMessage)).toMatchObject({ lastReadMessage: { id: messageA }, unreadCount: 0 });
    expect(await joinMessagesOf(roomB, noMarker)).toEqual([writtenB]);
    expect(await readStateOf(roomB, noMarker)).toMatchObject({ lastReadMessage: { id: writtenB }, unreadCount: 0 });
    expect(await joinMessagesOf(roomC, noJoin)).toEqual([]);
    const roomCHistory = (await gqlOk(behind, HistoryDocument, { roomName: roomC, first: 50 }, creator.token)).room!.messages!.edges;
    expect(roomCHistory.filter((e) => e.node.systemMessage)).toEqual([]);
    // The job took the room back off the list of the user whose join never applied; the others keep theirs.
    expect(await rawChatRooms(behind, noJoin.login)).not.toContain(roomC);
    expect(await rawChatRooms(behind, noMessage.login)).toContain(roomA);
    expect(await rawChatRooms(behind, noMarker.login)).toContain(roomB);
  });
});
