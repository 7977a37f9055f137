/**
 * A room's audit log over HTTP: each moderation and permission change that applies is appended with its actor,
 * target, reason and details, newest first and paged; a refused change appends nothing; an invite link's token never
 * shows; and a reason past its bound is refused. Who may read it is held by the permission matrix
 * (permissions.test.ts, SEE_AUDIT_LOG).
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { startApp } from '../../testkit/app.js';
import { codes, dataOf as ok, gqlAs } from '../../testkit/http.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { post, roomWith } from '../../testkit/data/rooms.js';

let app: App;
beforeAll(async () => {
  app = await startApp({ redis: true });
}, 60_000);

interface Entry {
  action: string;
  actorLogin: string;
  targetLogin: string | null;
  reason: string | null;
  details: string | null;
}

const LOG = 'query($r: String!, $first: Int, $after: String) { room(roomName: $r) { auditLog(first: $first, after: $after) { edges { node { action actorLogin targetLogin reason details at } } pageInfo { hasNextPage endCursor } } } }';

/** The whole log as `who` reads it, page by page of `size`. */
async function wholeLog(room: string, who: TestUser, size: number): Promise<Entry[]> {
  const entries: Entry[] = [];
  let after: string | null = null;
  for (;;) {
    const data = (await ok(gqlAs(app, LOG, { r: room, first: size, after }, who))) as {
      room: { auditLog: { edges: Array<{ node: Entry & { at: string } }>; pageInfo: { hasNextPage: boolean; endCursor: string } } };
    };
    const log = data.room.auditLog;
    entries.push(...log.edges.map(({ node: { at: _at, ...entry } }) => entry));
    if (!log.pageInfo.hasNextPage) return entries;
    after = log.pageInfo.endCursor;
  }
}

describe("a room's audit log", () => {
  it('holds each change that applied, newest first, with who, to whom, why and what, and no refused change', async () => {
    const [owner, admin, moderator, member, banned, invitee] = await Promise.all(Array.from({ length: 6 }, () => signUp(app)));
    const room = await roomWith(app, owner, [admin, moderator, member, banned]);
    const setRole = 'mutation($r: String!, $l: String!, $role: RoomRole!) { setRoomRole(roomName: $r, login: $l, role: $role) { name } }';
    const message = (await post(app, member, room, 'rude')).id;
    await ok(gqlAs(app, setRole, { r: room, l: admin.login, role: 'ADMIN' }, owner));
    await ok(gqlAs(app, setRole, { r: room, l: moderator.login, role: 'MODERATOR' }, admin));
    await ok(gqlAs(app, 'mutation($r: String!, $l: String!) { muteParticipant(roomName: $r, login: $l, minutes: 10, reason: "  flooding  ") { name } }', { r: room, l: member.login }, moderator));
    // Refused (a member mutes nobody): nothing is appended.
    expect(codes(await gqlAs(app, 'mutation($r: String!, $l: String!) { muteParticipant(roomName: $r, login: $l, minutes: 10) { name } }', { r: room, l: moderator.login }, member))).toEqual(['FORBIDDEN']);
    await ok(gqlAs(app, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l, ban: true, reason: "spam") { name } }', { r: room, l: banned.login }, moderator));
    await ok(gqlAs(app, 'mutation($m: ID!) { hideMessage(messageId: $m, reason: "rude") { id } }', { m: message }, admin));
    await ok(gqlAs(app, 'mutation($m: ID!) { pinMessage(messageId: $m) { id } }', { m: message }, owner));
    await ok(gqlAs(app, 'mutation($r: String!) { setRoomVisibility(roomName: $r, visibility: PRIVATE) { name } }', { r: room }, owner));
    await ok(gqlAs(app, 'mutation($r: String!, $l: String!) { inviteToRoom(roomName: $r, login: $l) { createdAt } }', { r: room, l: invitee.login }, moderator));
    const token = ((await ok(gqlAs(app, 'mutation($r: String!) { createInviteLink(roomName: $r, maxUses: 2) { token } }', { r: room }, admin))) as { createInviteLink: { token: string } }).createInviteLink.token;
    await ok(gqlAs(app, 'mutation($r: String!, $t: String!) { revokeInviteLink(roomName: $r, token: $t) }', { r: room, t: token }, admin));
    await ok(gqlAs(app, 'mutation($r: String!) { setRoomMemberPermissions(roomName: $r, permissions: [PIN, INVITE]) { name } }', { r: room }, admin));
    // As it is already: nothing changes, and nothing is appended.
    await ok(gqlAs(app, 'mutation($r: String!) { setRoomVisibility(roomName: $r, visibility: PRIVATE) { name } }', { r: room }, owner));
    await ok(gqlAs(app, 'mutation($r: String!, $l: String!) { transferRoomOwnership(roomName: $r, login: $l) { name } }', { r: room, l: admin.login }, owner));
    // The new owner leaves: the ownership passes to the next (the moderator), and that is appended too.
    await ok(gqlAs(app, 'mutation($r: String!) { leaveRoom(roomName: $r) }', { r: room }, admin));

    const tag = createHash('sha256').update(token).digest('hex').slice(0, 12);
    const log = await wholeLog(room, moderator, 3);
    expect(log).toEqual([
      { action: 'OWNERSHIP_TRANSFERRED', actorLogin: admin.login, targetLogin: moderator.login, reason: null, details: 'as the owner left' },
      { action: 'OWNERSHIP_TRANSFERRED', actorLogin: owner.login, targetLogin: admin.login, reason: null, details: null },
      { action: 'MEMBER_PERMISSIONS_CHANGED', actorLogin: admin.login, targetLogin: null, reason: null, details: 'INVITE, PIN' },
      { action: 'INVITE_LINK_REVOKED', actorLogin: admin.login, targetLogin: null, reason: null, details: `link ${tag}` },
      { action: 'INVITE_LINK_CREATED', actorLogin: admin.login, targetLogin: null, reason: null, details: expect.stringMatching(new RegExp(`^link ${tag}: 2 uses, until `)) },
      { action: 'INVITED', actorLogin: moderator.login, targetLogin: invitee.login, reason: null, details: null },
      { action: 'VISIBILITY_CHANGED', actorLogin: owner.login, targetLogin: null, reason: null, details: 'PUBLIC to PRIVATE' },
      { action: 'MESSAGE_PINNED', actorLogin: owner.login, targetLogin: member.login, reason: null, details: message },
      { action: 'MESSAGE_HIDDEN', actorLogin: admin.login, targetLogin: member.login, reason: 'rude', details: message },
      { action: 'BANNED', actorLogin: moderator.login, targetLogin: banned.login, reason: 'spam', details: null },
      { action: 'MUTED', actorLogin: moderator.login, targetLogin: member.login, reason: 'flooding', details: expect.stringMatching(/^until /) },
      { action: 'ROLE_CHANGED', actorLogin: admin.login, targetLogin: moderator.login, reason: null, details: 'MEMBER to MODERATOR' },
      { action: 'ROLE_CHANGED', actorLogin: owner.login, targetLogin: admin.login, reason: null, details: 'MEMBER to ADMIN' },
    ]);
    expect(JSON.stringify(log)).not.toContain(token);
    // The same log in one page as in pages of 3.
    expect(await wholeLog(room, moderator, 50)).toEqual(log);
  });

  it('refuses a reason past 500 characters on its field, and changes nothing', async () => {
    const [owner, member] = await Promise.all([signUp(app), signUp(app)]);
    const room = await roomWith(app, owner, [member]);
    const long = await gqlAs(app, 'mutation($r: String!, $l: String!, $why: String) { muteParticipant(roomName: $r, login: $l, minutes: 5, reason: $why) { name } }', { r: room, l: member.login, why: 'x'.repeat(501) }, owner);
    expect([codes(long), long.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'reason']);
    expect(await wholeLog(room, owner, 10)).toEqual([]);
    const muted = await ok(gqlAs(app, 'query($r: String!) { room(roomName: $r) { mutedParticipants { edges { node { login } } } } }', { r: room }, owner));
    expect(muted).toEqual({ room: { mutedParticipants: { edges: [] } } });
  });
});
