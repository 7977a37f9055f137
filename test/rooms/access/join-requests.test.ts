/**
 * Rooms on request over HTTP, on two instances: listed, refused to joinRoom, entered by a request a moderator
 * approves (an invitation the requester accepts) or declines; refused to every role below a moderator, an outsider,
 * a former member and a banned person; and of an approval and a decline racing each other exactly one applies, each
 * order staged between the other's read and its claim (run at RF 3 too: vitest.cluster.config.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { startApp } from '../../testkit/app.js';
import { codes, dataOf as ok, gqlAs, type GqlResult } from '../../testkit/http.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { uniqueRoomName } from '../../testkit/data/rooms.js';
import { cqlRow } from '../../testkit/cql.js';
import { onNextStatement } from '../../testkit/faults/statement-faults.js';

let a: App;
let b: App;
beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
}, 60_000);

const CREATE = 'mutation($n: String!, $v: RoomVisibility) { createRoom(input: { name: $n, visibility: $v }) { name visibility } }';
const JOIN = 'mutation($r: String!) { joinRoom(roomName: $r) { name } }';
const REQUEST = 'mutation($r: String!) { requestToJoin(roomName: $r) { requesterLogin room { name } } }';
const WITHDRAW = 'mutation($r: String!) { withdrawJoinRequest(roomName: $r) }';
const APPROVE = 'mutation($r: String!, $l: String!) { approveJoinRequest(roomName: $r, login: $l) { inviteeLogin inviter { login } } }';
const DECLINE = 'mutation($r: String!, $l: String!) { declineJoinRequest(roomName: $r, login: $l) }';
const ACCEPT = 'mutation($r: String!) { acceptInvitation(roomName: $r) { name participantCount } }';
const REQUESTS = 'query($r: String!) { room(roomName: $r) { joinRequests(first: 50) { edges { node { requesterLogin } } } viewerJoinRequest { requesterLogin } } }';
const SET_ROLE = 'mutation($r: String!, $l: String!, $role: RoomRole!) { setRoomRole(roomName: $r, login: $l, role: $role) { name } }';

/** A room on request of `owner`'s, with a moderator, a member and a guest in it. */
async function roomOnRequest(owner: TestUser, people: { moderator?: TestUser; member?: TestUser; guest?: TestUser } = {}): Promise<string> {
  const name = uniqueRoomName('knock');
  await ok(gqlAs(a, CREATE, { n: name, v: 'ON_REQUEST' }, owner));
  for (const [role, person] of Object.entries(people)) {
    await ok(gqlAs(a, 'mutation($r: String!, $l: String!) { inviteToRoom(roomName: $r, login: $l) { createdAt } }', { r: name, l: person.login }, owner));
    await ok(gqlAs(a, ACCEPT, { r: name }, person));
    if (role !== 'member') await ok(gqlAs(a, SET_ROLE, { r: name, l: person.login, role: role.toUpperCase() }, owner));
  }
  return name;
}

const waiting = async (name: string, as: TestUser) =>
  ((await ok(gqlAs(a, REQUESTS, { r: name }, as))) as { room: { joinRequests: { edges: Array<{ node: { requesterLogin: string } }> } | null } }).room.joinRequests?.edges.map((e) => e.node.requesterLogin) ?? null;

describe('a room on request', () => {
  it('is listed, refuses joinRoom, and lets in whom a moderator approves, by an invitation they accept', async () => {
    const [owner, moderator, asker] = await Promise.all([signUp(a), signUp(a), signUp(a)]);
    const name = await roomOnRequest(owner, { moderator });
    expect((await ok(gqlAs(a, 'query($r: String!) { room(roomName: $r) { name visibility } }', { r: name }, asker))).room).toEqual({ name, visibility: 'ON_REQUEST' });
    const join = await gqlAs(a, JOIN, { r: name }, asker);
    expect(codes(join)).toEqual(['FORBIDDEN']);
    expect(join.errors?.[0]?.message).toContain('requestToJoin');
    expect((await ok(gqlAs(a, REQUEST, { r: name }, asker))).requestToJoin).toEqual({ requesterLogin: asker.login, room: { name } });
    await ok(gqlAs(b, REQUEST, { r: name }, asker)); // asking again changes nothing
    expect(await waiting(name, moderator)).toEqual([asker.login]);
    expect(((await ok(gqlAs(a, REQUESTS, { r: name }, asker))) as { room: { viewerJoinRequest: unknown } }).room.viewerJoinRequest).toEqual({ requesterLogin: asker.login });
    expect((await ok(gqlAs(b, APPROVE, { r: name, l: asker.login }, moderator))).approveJoinRequest).toEqual({ inviteeLogin: asker.login, inviter: { login: moderator.login } });
    expect(await waiting(name, moderator)).toEqual([]);
    expect((await ok(gqlAs(a, ACCEPT, { r: name }, asker))).acceptInvitation).toEqual({ name, participantCount: 3 });
    // Decided: approving again finds nothing.
    expect(codes(await gqlAs(a, APPROVE, { r: name, l: asker.login }, moderator))).toEqual(['NOT_FOUND']);
  });

  it('drops a declined request, which may be made again, or withdrawn by its requester', async () => {
    const [owner, asker] = await Promise.all([signUp(a), signUp(a)]);
    const name = await roomOnRequest(owner);
    await ok(gqlAs(a, REQUEST, { r: name }, asker));
    expect((await ok(gqlAs(a, DECLINE, { r: name, l: asker.login }, owner))).declineJoinRequest).toBe(true);
    expect(await waiting(name, owner)).toEqual([]);
    expect(await ok(gqlAs(a, 'query { roomInvitations { room { name } } }', {}, asker))).toEqual({ roomInvitations: [] });
    await ok(gqlAs(a, REQUEST, { r: name }, asker));
    expect(await waiting(name, owner)).toEqual([asker.login]);
    expect((await ok(gqlAs(a, WITHDRAW, { r: name }, asker))).withdrawJoinRequest).toBe(true);
    expect((await ok(gqlAs(a, WITHDRAW, { r: name }, asker))).withdrawJoinRequest).toBe(false);
    expect(await waiting(name, owner)).toEqual([]);
  });

  it('refuses a banned person, a participant, and a request into a public or a private room', async () => {
    const [owner, member, banned, outsider] = await Promise.all([signUp(a), signUp(a), signUp(a), signUp(a)]);
    const name = await roomOnRequest(owner, { member });
    await ok(gqlAs(a, 'mutation($r: String!, $l: String!) { inviteToRoom(roomName: $r, login: $l) { createdAt } }', { r: name, l: banned.login }, owner));
    await ok(gqlAs(a, ACCEPT, { r: name }, banned));
    await ok(gqlAs(a, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l, ban: true) { name } }', { r: name, l: banned.login }, owner));
    expect(codes(await gqlAs(a, REQUEST, { r: name }, banned))).toEqual(['BANNED']);
    const asMember = await gqlAs(a, REQUEST, { r: name }, member);
    expect([codes(asMember), asMember.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'roomName']);
    const open = uniqueRoomName('open');
    await ok(gqlAs(a, CREATE, { n: open, v: 'PUBLIC' }, owner));
    expect(codes(await gqlAs(a, REQUEST, { r: open }, outsider))).toEqual(['BAD_USER_INPUT']);
    const hidden = uniqueRoomName('hidden');
    await ok(gqlAs(a, CREATE, { n: hidden, v: 'PRIVATE' }, owner));
    expect(codes(await gqlAs(a, REQUEST, { r: hidden }, outsider))).toEqual(['NOT_FOUND']);
  });

  it('lets no one below a moderator see or decide the requests: a guest, a member, an outsider, a former member, the banned', async () => {
    const [owner, moderator, member, guest, former, banned, outsider, asker] = await Promise.all(Array.from({ length: 8 }, () => signUp(a)));
    const name = await roomOnRequest(owner, { moderator, member, guest });
    for (const person of [former, banned]) {
      await ok(gqlAs(a, 'mutation($r: String!, $l: String!) { inviteToRoom(roomName: $r, login: $l) { createdAt } }', { r: name, l: person.login }, owner));
      await ok(gqlAs(a, ACCEPT, { r: name }, person));
    }
    await ok(gqlAs(a, 'mutation($r: String!) { leaveRoom(roomName: $r) }', { r: name }, former));
    await ok(gqlAs(a, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l, ban: true) { name } }', { r: name, l: banned.login }, owner));
    await ok(gqlAs(a, REQUEST, { r: name }, asker));
    for (const who of [guest, member, outsider, former, banned]) {
      expect(await waiting(name, who), who.login).toBeNull();
      expect(codes(await gqlAs(a, APPROVE, { r: name, l: asker.login }, who)), who.login).toEqual(['FORBIDDEN']);
      expect(codes(await gqlAs(a, DECLINE, { r: name, l: asker.login }, who)), who.login).toEqual(['FORBIDDEN']);
    }
    expect(await waiting(name, moderator)).toEqual([asker.login]);
    const bad = await gqlAs(a, APPROVE, { r: name, l: 'not a login!' }, moderator);
    expect([codes(bad), bad.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'login']);
  });
});

describe('an approval racing a decline', () => {
  type Outcome = { approved: unknown[]; declined: unknown[]; invited: boolean };
  const CLAIM = /UPDATE room_join_requests SET status = \?, decision = \?/;

  /** One round for `asker`'s request: at once, or with one decision run whole between the other's read and its claim. */
  async function round(name: string, owner: TestUser, moderator: TestUser, asker: TestUser, staged?: 'approval first' | 'decline first'): Promise<Outcome> {
    const approve = () => gqlAs(a, APPROVE, { r: name, l: asker.login }, owner);
    const decline = () => gqlAs(b, DECLINE, { r: name, l: asker.login }, moderator);
    let approved: GqlResult<Record<string, unknown>> | undefined;
    let declined: GqlResult<Record<string, unknown>> | undefined;
    if (staged === 'decline first') {
      const hook = onNextStatement(a, CLAIM, async () => void (declined = await decline()));
      approved = await approve();
      expect(hook.fired()).toBe(true);
    } else if (staged === 'approval first') {
      const hook = onNextStatement(b, CLAIM, async () => void (approved = await approve()));
      declined = await decline();
      expect(hook.fired()).toBe(true);
    } else {
      [approved, declined] = await Promise.all([approve(), decline()]);
    }
    const invitation = await cqlRow(a, 'SELECT status FROM room_invitations WHERE invitee_login = ? AND room_name = ?', [asker.login, name]);
    return { approved: codes(approved!), declined: codes(declined!), invited: invitation !== undefined };
  }

  const approvalWon: Outcome = { approved: [], declined: ['NOT_FOUND'], invited: true };
  const declineWon: Outcome = { approved: ['NOT_FOUND'], declined: [], invited: false };

  it("applies exactly one of them: each order staged between the other's read and its claim, then 10 rounds at once on two instances", async () => {
    const [owner, moderator] = await Promise.all([signUp(a), signUp(a)]);
    const name = await roomOnRequest(owner, { moderator });
    const askers = await Promise.all(Array.from({ length: 12 }, () => signUp(a)));
    for (const asker of askers) await ok(gqlAs(a, REQUEST, { r: name }, asker));
    expect(await round(name, owner, moderator, askers[0]!, 'decline first')).toEqual(declineWon);
    expect(await round(name, owner, moderator, askers[1]!, 'approval first')).toEqual(approvalWon);
    const rounds = await Promise.all(askers.slice(2).map((asker) => round(name, owner, moderator, asker)));
    for (const outcome of rounds) expect([approvalWon, declineWon], JSON.stringify(outcome)).toContainEqual(outcome);
    expect(await waiting(name, owner)).toEqual([]);
  });

  it('a withdrawal racing an approval: exactly one applies, in each order', async () => {
    const [owner, first, second] = await Promise.all([signUp(a), signUp(a), signUp(a)]);
    const name = await roomOnRequest(owner);
    for (const asker of [first, second]) await ok(gqlAs(a, REQUEST, { r: name }, asker));
    const invited = async (asker: TestUser) => (await cqlRow(a, 'SELECT status FROM room_invitations WHERE invitee_login = ? AND room_name = ?', [asker.login, name])) !== undefined;
    // The withdrawal lands between the approval's read and its claim.
    let withdrew: GqlResult<Record<string, unknown>> | undefined;
    const hook = onNextStatement(a, CLAIM, async () => void (withdrew = await gqlAs(b, WITHDRAW, { r: name }, first)));
    expect(codes(await gqlAs(a, APPROVE, { r: name, l: first.login }, owner))).toEqual(['NOT_FOUND']);
    expect(hook.fired()).toBe(true);
    expect([withdrew!.data, await invited(first)]).toEqual([{ withdrawJoinRequest: true }, false]);
    // The approval lands first: the withdrawal finds nothing to take back.
    await ok(gqlAs(a, APPROVE, { r: name, l: second.login }, owner));
    expect([(await ok(gqlAs(b, WITHDRAW, { r: name }, second))).withdrawJoinRequest, await invited(second)]).toEqual([false, true]);
  });
});
