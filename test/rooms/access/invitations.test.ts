/**
 * Private rooms, invitations and invite links over HTTP, on two instances: a private room is hidden from outsiders
 * and entered by an accepted invitation or a link; of an accept and a revoke racing each other exactly one applies;
 * 50 redeemers of a 10-use link let exactly 10 in; and a join that read a room public does not apply once it was
 * made private. The races run at RF 3 too (vitest.cluster.config.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { ManualClock, startApp } from '../../testkit/app.js';
import { codes, gqlAs, gqlOk, type GqlResult } from '../../testkit/http.js';
import { signUp, signUpMany, type TestUser } from '../../testkit/data/users.js';
import { post, rawChatRooms, rawRoomRow, roomWith, uniqueRoomName } from '../../testkit/data/rooms.js';
import { cqlRow } from '../../testkit/cql.js';
import { failNextStatement, onNextStatement } from '../../testkit/faults/statement-faults.js';
import { inboxFeed } from '../../testkit/feeds.js';
import { send as sendDirect } from '../../testkit/data/messenger.js';
import { InboxEventsDocument } from '../../generated/graphql.js';
import { inboxChannel } from '../../../src/resolvers/messenger/events.js';

let a: App;
let b: App;
let owner: TestUser;
let moderator: TestUser;

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  [owner, moderator] = await Promise.all([signUp(a), signUp(a)]);
}, 60_000);


const CREATE = 'mutation($n: String!, $v: RoomVisibility) { createRoom(input: { name: $n, visibility: $v }) { name visibility } }';
const INVITE = 'mutation($r: String!, $l: String!) { inviteToRoom(roomName: $r, login: $l) { room { name } inviteeLogin inviter { login } } }';
const ACCEPT = 'mutation($r: String!) { acceptInvitation(roomName: $r) { name participantCount } }';
const REVOKE = 'mutation($r: String!, $l: String!) { revokeInvitation(roomName: $r, login: $l) }';
const DECLINE = 'mutation($r: String!) { declineInvitation(roomName: $r) }';
const INVITATIONS = '{ roomInvitations { room { name visibility } inviter { login } } }';
const ROOM = 'query($r: String!) { room(roomName: $r) { name visibility } }';
const JOIN = 'mutation($r: String!) { joinRoom(roomName: $r) { name } }';
const LEAVE = 'mutation($r: String!) { leaveRoom(roomName: $r) }';
const SET_VISIBILITY = 'mutation($r: String!, $v: RoomVisibility!) { setRoomVisibility(roomName: $r, visibility: $v) { visibility } }';

/** A private room of the owner's, with the moderator named in it. */
async function privateRoom(): Promise<string> {
  const name = uniqueRoomName('private');
  await gqlOk(a, CREATE as never, { n: name, v: 'PRIVATE' } as never, owner.token);
  await gqlOk(a, INVITE as never, { r: name, l: moderator.login } as never, owner.token);
  await gqlOk(a, ACCEPT as never, { r: name } as never, moderator.token);
  await gqlOk(a, 'mutation($r: String!, $l: String!) { setRoomModerator(roomName: $r, login: $l, moderator: true) { name } }' as never, { r: name, l: moderator.login } as never, owner.token);
  return name;
}

const participantsOf = async (name: string) =>
  [...(((await rawRoomRow(a, name))?.participants as Set<{ login: string }> | null) ?? [])].map((p) => p.login);

describe('a private room', () => {
  it('is hidden from an outsider, who enters by an accepted invitation and then sees, reads and posts', async () => {
    const outsider = await signUp(a);
    const name = uniqueRoomName('private');
    await gqlOk(a, CREATE as never, { n: name, v: 'PRIVATE' } as never, owner.token);
    await post(a, owner, name, 'before you came');
    expect((await gqlAs(a, ROOM, { r: name }, outsider)).data).toEqual({ room: null });
    expect(codes(await gqlAs(a, JOIN, { r: name }, outsider))).toEqual(['NOT_FOUND']);
    const listed = async (user: TestUser) => {
      const names: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page = (await gqlAs(a, 'query($after: String) { rooms(first: 100, after: $after) { edges { node { name } } pageInfo { hasNextPage endCursor } } }', { after }, user)).data!.rooms as {
          edges: Array<{ node: { name: string } }>;
          pageInfo: { hasNextPage: boolean; endCursor: string };
        };
        names.push(...page.edges.map((e) => e.node.name));
        if (!page.pageInfo.hasNextPage) return names;
        after = page.pageInfo.endCursor;
      }
    };
    expect(await listed(owner)).not.toContain(name);

    const invited = await gqlAs(b, INVITE, { r: name, l: outsider.login }, owner);
    expect(invited.data).toEqual({ inviteToRoom: { room: { name }, inviteeLogin: outsider.login, inviter: { login: owner.login } } });
    // Inviting twice changes nothing.
    expect((await gqlAs(a, INVITE, { r: name, l: outsider.login }, owner)).errors).toBeUndefined();
    expect((await gqlAs(a, INVITATIONS, {}, outsider)).data).toEqual({ roomInvitations: [{ room: { name, visibility: 'PRIVATE' }, inviter: { login: owner.login } }] });
    // Still hidden until accepted.
    expect((await gqlAs(a, ROOM, { r: name }, outsider)).data).toEqual({ room: null });

    expect((await gqlAs(b, ACCEPT, { r: name }, outsider)).data).toEqual({ acceptInvitation: { name, participantCount: 2 } });
    expect((await gqlAs(a, ROOM, { r: name }, outsider)).data).toEqual({ room: { name, visibility: 'PRIVATE' } });
    expect((await gqlAs(a, INVITATIONS, {}, outsider)).data).toEqual({ roomInvitations: [] });
    expect((await rawChatRooms(a, outsider.login)).has(name)).toBe(true);
    await post(a, outsider, name, 'hello');
    const history = await gqlAs(a, 'query($r: String!) { room(roomName: $r) { messages(first: 10) { edges { node { content } } } } }', { r: name }, outsider);
    expect(JSON.stringify(history.data)).toContain('before you came');
    // Accepted, the invitation is gone; an accept again (a retry whose answer was lost) answers the room.
    expect((await gqlAs(a, ACCEPT, { r: name }, outsider)).data).toEqual({ acceptInvitation: { name, participantCount: 2 } });
    // The owner who leaves a private room alone keeps it, and comes back into it.
    await gqlOk(a, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l) { name } }' as never, { r: name, l: outsider.login } as never, owner.token);
    expect((await gqlAs(a, LEAVE, { r: name }, owner)).data).toEqual({ leaveRoom: true });
    expect((await gqlAs(a, JOIN, { r: name }, owner)).data).toEqual({ joinRoom: { name } });
  });

  it('tells its invitee live on their inbox feed, once, and nobody else; delivered after a revoke it shows nothing', async () => {
    const name = await privateRoom();
    const [invitee, bystander] = await signUpMany(a, 2, 'live');
    // On the other instance: the event travels through Redis.
    const feed = await inboxFeed(b, invitee!, InboxEventsDocument);
    const bystanders = await inboxFeed(b, bystander!, InboxEventsDocument);
    expect((await gqlAs(a, INVITE, { r: name, l: invitee!.login }, owner)).errors).toBeUndefined();
    const told = (await feed.data()).inboxEvents;
    expect(told).toEqual({ __typename: 'RoomInvitationReceived', invitation: { room: { name }, inviter: { login: owner.login } } });
    // Inviting again says nothing: the next event the invitee hears is a message sent after it.
    expect((await gqlAs(a, INVITE, { r: name, l: invitee!.login }, owner)).errors).toBeUndefined();
    await sendDirect(a, owner, invitee!, 'after the second invite');
    expect((await feed.data()).inboxEvents.__typename).toBe('DirectMessageReceived');
    // Nor did anyone else hear of it.
    await sendDirect(a, owner, bystander!, 'to the bystander');
    expect((await bystanders.data()).inboxEvents.__typename).toBe('DirectMessageReceived');
    // Delivered late (its publish replayed after the revoke), it shows nothing of the room.
    const invitedAt = (await cqlRow(a, 'SELECT created_at FROM room_invitations WHERE invitee_login = ? AND room_name = ?', [invitee!.login, name]))!.created_at as Date;
    expect((await gqlAs(a, REVOKE, { r: name, l: invitee!.login }, owner)).data).toEqual({ revokeInvitation: true });
    await a.services.pubsub.publish(inboxChannel(invitee!.login), { type: 'RoomInvitationReceived', owner: invitee!.login, roomName: name, invitedAt });
    expect((await feed.data()).inboxEvents).toEqual({ __typename: 'RoomInvitationReceived', invitation: null });
  });

  it.each(['removed', 'left'] as const)('lets nobody back in by an invitation left accepted (its delete failed after the join) once they %s', async (how) => {
    const name = await privateRoom();
    const [invitee] = await signUpMany(a, 1, 'stuck');
    await gqlOk(a, INVITE as never, { r: name, l: invitee!.login } as never, owner.token);
    const failed = failNextStatement(a, /DELETE FROM room_invitations .*IF status/);
    // The join applied: the answer is the room, though the invitation's delete failed.
    expect((await gqlAs(a, ACCEPT, { r: name }, invitee!)).data).toEqual({ acceptInvitation: { name, participantCount: 3 } });
    expect(failed.fired()).toBe(true);
    const row = await cqlRow(a, 'SELECT status FROM room_invitations WHERE invitee_login = ? AND room_name = ?', [invitee!.login, name]);
    expect(row?.status).toBe('ACCEPTED');
    if (how === 'removed') {
      await gqlOk(a, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l) { name } }' as never, { r: name, l: invitee!.login } as never, owner.token);
    } else {
      expect((await gqlAs(a, LEAVE, { r: name }, invitee!)).data).toEqual({ leaveRoom: true });
    }
    expect(codes(await gqlAs(a, ACCEPT, { r: name }, invitee!))).toEqual(['NOT_FOUND']);
    expect((await gqlAs(a, ROOM, { r: name }, invitee!)).data).toEqual({ room: null });
  });

  it('refuses to invite a participant, someone banned or nobody, and lets an invitee decline', async () => {
    const name = await privateRoom();
    const [member, banned, invitee] = await signUpMany(a, 3, 'inv');
    for (const user of [member!, banned!]) {
      await gqlOk(a, INVITE as never, { r: name, l: user.login } as never, owner.token);
      await gqlOk(a, ACCEPT as never, { r: name } as never, user.token);
    }
    const [pendingThenBanned] = await signUpMany(a, 1, 'inv');
    await gqlOk(a, INVITE as never, { r: name, l: pendingThenBanned!.login } as never, owner.token);
    for (const user of [banned!, pendingThenBanned!]) {
      await gqlOk(a, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l, ban: true) { name } }' as never, { r: name, l: user.login } as never, owner.token);
    }
    // Banned, an invitee no longer sees the room in their invitations, nor gets in by them: the ban dropped it (once
    // unbanned, they need a new one).
    expect((await gqlAs(a, INVITATIONS, {}, pendingThenBanned!)).data).toEqual({ roomInvitations: [] });
    expect(codes(await gqlAs(a, ACCEPT, { r: name }, pendingThenBanned!))).toEqual(['NOT_FOUND']);
    const asMember = await gqlAs(a, INVITE, { r: name, l: member!.login }, owner);
    expect([codes(asMember), asMember.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'login']);
    expect(codes(await gqlAs(a, INVITE, { r: name, l: banned!.login }, moderator))).toEqual(['FORBIDDEN']);
    expect(codes(await gqlAs(a, INVITE, { r: name, l: 'nobody-at-all' }, owner))).toEqual(['NOT_FOUND']);
    // A member may not invite.
    expect(codes(await gqlAs(a, INVITE, { r: name, l: invitee!.login }, member!))).toEqual(['FORBIDDEN']);

    await gqlOk(a, INVITE as never, { r: name, l: invitee!.login } as never, owner.token);
    expect((await gqlAs(a, DECLINE, { r: name }, invitee!)).data).toEqual({ declineInvitation: true });
    expect((await gqlAs(a, DECLINE, { r: name }, invitee!)).data).toEqual({ declineInvitation: false });
    expect(codes(await gqlAs(a, ACCEPT, { r: name }, invitee!))).toEqual(['NOT_FOUND']);
    expect(await participantsOf(name)).not.toContain(invitee!.login);
  });

  it('drops an invitation with its room: one to a room deleted and made again under the name cannot be accepted', async () => {
    const name = await privateRoom();
    const invitee = await signUp(a);
    await gqlOk(a, INVITE as never, { r: name, l: invitee.login } as never, owner.token);
    await gqlOk(a, 'mutation($r: String!) { deleteRoom(roomName: $r) }' as never, { r: name } as never, owner.token);
    await gqlOk(a, CREATE as never, { n: name, v: 'PRIVATE' } as never, owner.token);
    expect((await gqlAs(a, INVITATIONS, {}, invitee)).data).toEqual({ roomInvitations: [] });
    expect(codes(await gqlAs(a, ACCEPT, { r: name }, invitee))).toEqual(['NOT_FOUND']);
    expect(await participantsOf(name)).toEqual([owner.login]);
  });
});

describe('an accept racing a revoke', () => {
  type Outcome = 'accepted' | 'revoked';

  /**
   * One round on a fresh private room: the invitee accepts while the moderator revokes, on the two instances, at
   * once or in the order `staged` asks (the other runs to its end just before this one's LWT is sent). Exactly one
   * applies, and the room and the answers agree on which.
   */
  async function round(invitee: TestUser, i: number, staged?: Outcome): Promise<Outcome> {
    const name = await privateRoom();
    await gqlOk(a, INVITE as never, { r: name, l: invitee.login } as never, moderator.token);
    const [acceptOn, revokeOn] = i % 2 ? [a, b] : [b, a];
    const accept = () => gqlAs(acceptOn, ACCEPT, { r: name }, invitee);
    const revoke = () => gqlAs(revokeOn, REVOKE, { r: name, l: invitee.login }, moderator);
    let accepted: GqlResult<Record<string, unknown>> | undefined;
    let revoked: GqlResult<Record<string, unknown>> | undefined;
    if (staged === 'revoked') {
      const hook = onNextStatement(acceptOn, /SET status = 'ACCEPTED'/, async () => void (revoked = await revoke()));
      accepted = await accept();
      expect(hook.fired()).toBe(true);
    } else if (staged === 'accepted') {
      const hook = onNextStatement(revokeOn, /DELETE FROM room_invitations .* IF status = \?/, async () => void (accepted = await accept()));
      revoked = await revoke();
      expect(hook.fired()).toBe(true);
    } else {
      [accepted, revoked] = await Promise.all([accept(), revoke()]);
    }
    const inRoom = (await participantsOf(name)).includes(invitee.login);
    if (accepted!.errors) {
      expect(codes(accepted!)).toEqual(['NOT_FOUND']);
      expect(revoked!.data).toEqual({ revokeInvitation: true });
      expect(inRoom).toBe(false);
      expect((await rawChatRooms(a, invitee.login)).has(name)).toBe(false);
      return 'revoked';
    }
    expect(codes(revoked!)).toEqual(['CONFLICT']);
    expect(inRoom).toBe(true);
    return 'accepted';
  }

  it('holds: exactly one applies (each order staged once, then 20 rounds at once)', async () => {
    const invitees = await signUpMany(a, 22, 'invitee');
    expect(await round(invitees[0]!, 0, 'revoked')).toBe('revoked');
    expect(await round(invitees[1]!, 1, 'accepted')).toBe('accepted');
    const outcomes: Outcome[] = [];
    for (let i = 2; i < invitees.length; i++) outcomes.push(await round(invitees[i]!, i));
    expect(outcomes).toHaveLength(20);
  });
});

describe('a join racing the room being made private', () => {
  type Outcome = 'joined' | 'refused';

  /**
   * One round on a fresh public room: a user joins while its owner makes it private, on the two instances. A join
   * that read the room public and reaches it after it was made private does not apply: NOT_FOUND, and not in it.
   */
  async function round(joiner: TestUser, i: number, staged?: Outcome): Promise<Outcome> {
    const name = await roomWith(a, owner);
    const [joinOn, hideOn] = i % 2 ? [a, b] : [b, a];
    const join = () => gqlAs(joinOn, JOIN, { r: name }, joiner);
    const hide = () => gqlAs(hideOn, SET_VISIBILITY, { r: name, v: 'PRIVATE' }, owner);
    let joined: GqlResult<Record<string, unknown>> | undefined;
    let hidden: GqlResult<Record<string, unknown>> | undefined;
    if (staged === 'refused') {
      const hook = onNextStatement(joinOn, /participants = participants \+ \?/, async () => void (hidden = await hide()));
      joined = await join();
      expect(hook.fired()).toBe(true);
    } else if (staged === 'joined') {
      const hook = onNextStatement(hideOn, /SET visibility = \?/, async () => void (joined = await join()));
      hidden = await hide();
      expect(hook.fired()).toBe(true);
    } else {
      [joined, hidden] = await Promise.all([join(), hide()]);
    }
    expect(hidden!.errors).toBeUndefined();
    const inRoom = (await participantsOf(name)).includes(joiner.login);
    if (joined!.errors) {
      expect(codes(joined!)).toEqual(['NOT_FOUND']);
      expect(inRoom).toBe(false);
      expect((await rawChatRooms(a, joiner.login)).has(name)).toBe(false);
      return 'refused';
    }
    expect(inRoom).toBe(true);
    // In before it was made private, the joiner sees it still.
    expect((await gqlAs(a, ROOM, { r: name }, joiner)).data).toEqual({ room: { name, visibility: 'PRIVATE' } });
    return 'joined';
  }

  it('holds: no join applies after the change (each order staged once, then 20 rounds at once)', async () => {
    const joiners = await signUpMany(a, 22, 'joiner');
    expect(await round(joiners[0]!, 0, 'refused')).toBe('refused');
    expect(await round(joiners[1]!, 1, 'joined')).toBe('joined');
    for (let i = 2; i < joiners.length; i++) await round(joiners[i]!, i);
  });
});

const CREATE_LINK = 'mutation($r: String!, $n: Int!, $m: Int) { createInviteLink(roomName: $r, maxUses: $n, expiresInMinutes: $m) { token maxUses uses expiresAt room { name } } }';
const REDEEM = 'mutation($t: String!) { redeemInviteLink(token: $t) { name } }';

const linkOf = async (app: App, name: string, maxUses: number, by = owner, minutes?: number) =>
  ((await gqlOk(app, CREATE_LINK as never, { r: name, n: maxUses, m: minutes } as never, by.token)) as { createInviteLink: { token: string } }).createInviteLink.token;

describe('an invite link', () => {
  it('lets its holder into a private room, once each, until it is revoked or expires', async () => {
    const name = await privateRoom();
    const [first, second, third] = await signUpMany(a, 3, 'link');
    const made = await gqlAs(a, CREATE_LINK, { r: name, n: 5 }, moderator);
    expect(made.data).toMatchObject({ createInviteLink: { maxUses: 5, uses: 0, room: { name } } });
    const token = (made.data!.createInviteLink as { token: string }).token;
    expect((await gqlAs(b, REDEEM, { t: token }, first!)).data).toEqual({ redeemInviteLink: { name } });
    // A participant redeeming is answered the room and takes no use.
    expect((await gqlAs(a, REDEEM, { t: token }, first!)).data).toEqual({ redeemInviteLink: { name } });
    expect((await cqlRow(a, 'SELECT uses FROM room_invite_links WHERE link_token = ?', [token]))?.uses).toBe(1);
    expect((await gqlAs(a, 'mutation($r: String!, $t: String!) { revokeInviteLink(roomName: $r, token: $t) }', { r: name, t: token }, owner)).data).toEqual({ revokeInviteLink: true });
    expect(codes(await gqlAs(a, REDEEM, { t: token }, second!))).toEqual(['NOT_FOUND']);
    expect(codes(await gqlAs(a, REDEEM, { t: 'not a token' }, second!))).toEqual(['NOT_FOUND']);
    expect(await participantsOf(name)).not.toContain(second!.login);

    const clock = new ManualClock();
    const later = await startApp({ redis: true, clock });
    try {
      const expiring = await linkOf(later, name, 5, owner, 1);
      clock.advance(61_000);
      expect(codes(await gqlAs(later, REDEEM, { t: expiring }, third!))).toEqual(['NOT_FOUND']);
    } finally {
      await later.stop();
    }
    const bad = await gqlAs(a, CREATE_LINK, { r: name, n: 0 }, owner);
    expect([codes(bad), bad.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'maxUses']);
  });

  it('counts each use exactly: 50 redeemers of a 10-use link on two instances let exactly 10 in', async () => {
    const name = await privateRoom();
    const token = await linkOf(a, name, 10);
    const redeemers = await signUpMany(a, 50, 'redeemer');
    const answers = await Promise.all(redeemers.map((user, i) => gqlAs(i % 2 ? a : b, REDEEM, { t: token }, user)));
    const admitted = redeemers.filter((_, i) => !answers[i]!.errors).map((u) => u.login);
    const refused = answers.filter((answer) => answer.errors).map((answer) => [codes(answer), answer.errors?.[0]?.extensions?.limit]);
    expect(admitted).toHaveLength(10);
    expect(refused).toEqual(Array.from({ length: 40 }, () => [['LIMIT_REACHED'], 'INVITE_LINK_USES']));
    const participants = await participantsOf(name);
    expect(participants.filter((login) => login.startsWith('redeemer')).sort()).toEqual(admitted.sort());
    const row = await cqlRow(a, 'SELECT uses, used_by FROM room_invite_links WHERE link_token = ?', [token]);
    expect(row?.uses).toBe(10);
    expect(Object.keys(row?.used_by ?? {}).sort()).toEqual(admitted.sort());
  });
});
