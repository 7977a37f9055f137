/**
 * The permission matrix (src/resolvers/rooms/access/permissions.ts) as clients meet it over HTTP against the real node: for
 * every action, each role below the one it needs, an outsider, a former member and a banned user are refused (or see
 * nothing), and the role it needs does it; nobody acts on their equal or their better; `Room.viewerRole` says each
 * role; and docs/api.md's matrix is the one the code applies.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { REQUIRED_ROLE, type RoomAction, type RoomRole } from '../../../src/resolvers/rooms/access/permissions.js';
import { startApp } from '../../testkit/app.js';
import { codes, gql, gqlOk, type GqlResult } from '../../testkit/http.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { post, roomWith } from '../../testkit/data/rooms.js';

let app: App;
/** The people of every room castRoom makes, each in the part the room gives them. */
let everyone: TestUser[];
beforeAll(async () => {
  app = await startApp({ redis: true });
  everyone = await Promise.all(Array.from({ length: 9 }, () => signUp(app)));
});

/** Who tries: each role, and those with none. */
type Who = RoomRole | 'OUTSIDER' | 'FORMER_MEMBER' | 'BANNED';

/** A new room with one person of each kind, a message of the owner's and one of a member's, and a member to act on. */
interface Cast {
  room: string;
  people: Record<Who, TestUser>;
  target: TestUser;
  ownersMessage: string;
  membersMessage: string;
}

async function castRoom(): Promise<Cast> {
  const [owner, moderator, member, target, outsider, former, banned, admin, guest] = everyone;
  const room = await roomWith(app, owner!, [admin!, moderator!, member!, guest!, target!, former!, banned!]);
  const give = (login: string, role: string) =>
    gqlOk(app, 'mutation($r: String!, $l: String!, $role: RoomRole!) { setRoomRole(roomName: $r, login: $l, role: $role) { name } }' as never, { r: room, l: login, role } as never, owner!.token);
  await give(admin!.login, 'ADMIN');
  await give(moderator!.login, 'MODERATOR');
  await give(guest!.login, 'GUEST');
  await gqlOk(app, 'mutation($r: String!) { leaveRoom(roomName: $r) }' as never, { r: room } as never, former!.token);
  await gqlOk(app, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l, ban: true) { name } }' as never, { r: room, l: banned!.login } as never, owner!.token);
  const ownersMessage = (await post(app, owner!, room, 'from the owner')).id;
  const membersMessage = (await post(app, target!, room, 'from a member')).id;
  return {
    room,
    people: { OWNER: owner!, ADMIN: admin!, MODERATOR: moderator!, MEMBER: member!, GUEST: guest!, OUTSIDER: outsider!, FORMER_MEMBER: former!, BANNED: banned! },
    target: target!,
    ownersMessage,
    membersMessage,
  };
}

const run = (doc: string, variables: Record<string, unknown>, user: TestUser) => gql(app, doc as never, variables as never, user.token) as Promise<GqlResult<Record<string, unknown>>>;

/**
 * Each action as one request, and how its refusal shows: an error (FORBIDDEN, or for those with no role the code the
 * path answers them), or data that says nothing (`hidden`).
 */
const ACTIONS: Record<RoomAction, { doc: string; vars: (c: Cast) => Record<string, unknown>; hidden?: (data: Record<string, unknown>) => boolean }> = {
  POST: { doc: 'mutation($r: String!) { postMessage(roomName: $r, content: "hello") { id } }', vars: (c) => ({ r: c.room }) },
  REACT: { doc: 'mutation($m: ID!) { addReaction(messageId: $m, emoji: "👍") { id } }', vars: (c) => ({ m: c.ownersMessage }) },
  SKIP_SLOW_MODE: { doc: '', vars: () => ({}) }, // its own test below: refused is RATE_LIMITED, on the second post
  REMOVE: { doc: 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l) { name } }', vars: (c) => ({ r: c.room, l: c.target.login }) },
  BAN: { doc: 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l, ban: true) { name } }', vars: (c) => ({ r: c.room, l: c.target.login }) },
  MUTE: { doc: 'mutation($r: String!, $l: String!) { muteParticipant(roomName: $r, login: $l, minutes: 5) { name } }', vars: (c) => ({ r: c.room, l: c.target.login }) },
  SLOW_MODE: { doc: 'mutation($r: String!) { setSlowMode(roomName: $r, seconds: 0) { name } }', vars: (c) => ({ r: c.room }) },
  INVITE: {
    doc: 'mutation($r: String!, $l: String!) { inviteToRoom(roomName: $r, login: $l) { createdAt } }',
    vars: (c) => ({ r: c.room, l: c.people.OUTSIDER.login }),
  },
  // Room.joinRequests (null below it); approving and declining are tried by each role in join-requests.test.ts.
  APPROVE: {
    doc: 'query($r: String!) { room(roomName: $r) { joinRequests { edges { node { requesterLogin } } } } }',
    vars: (c) => ({ r: c.room }),
    hidden: (data) => (data.room as { joinRequests: unknown } | null)?.joinRequests == null,
  },
  SEE_AUDIT_LOG: {
    doc: 'query($r: String!) { room(roomName: $r) { auditLog { edges { node { action } } } } }',
    vars: (c) => ({ r: c.room }),
    hidden: (data) => (data.room as { auditLog: unknown } | null)?.auditLog == null,
  },
  SEE_MODERATION: {
    doc: 'query($r: String!) { room(roomName: $r) { bannedParticipants { edges { node { login } } } mutedParticipants { edges { node { login } } } } }',
    vars: (c) => ({ r: c.room }),
    hidden: (data) => {
      const room = data.room as { bannedParticipants: unknown; mutedParticipants: unknown } | null;
      return room === null || (room.bannedParticipants === null && room.mutedParticipants === null);
    },
  },
  PIN: { doc: 'mutation($m: ID!) { pinMessage(messageId: $m) { id } }', vars: (c) => ({ m: c.membersMessage }) },
  REMOVE_ANY_MESSAGE: { doc: 'mutation($m: ID!) { hideMessage(messageId: $m) { id } }', vars: (c) => ({ m: c.membersMessage }) },
  EDIT_ROOM_DATA: { doc: 'mutation($r: String!) { setRoomMetadata(roomName: $r, metadata: {topic: "x"}) { name } }', vars: (c) => ({ r: c.room }) },
  CHANGE_ROLES: { doc: 'mutation($r: String!, $l: String!) { setRoomModerator(roomName: $r, login: $l, moderator: true) { name } }', vars: (c) => ({ r: c.room, l: c.target.login }) },
  TRANSFER_OWNERSHIP: {
    doc: 'mutation($r: String!, $l: String!) { transferRoomOwnership(roomName: $r, login: $l) { owner { login } } }',
    vars: (c) => ({ r: c.room, l: c.target.login }),
  },
  DELETE_ROOM: { doc: 'mutation($r: String!) { deleteRoom(roomName: $r) }', vars: (c) => ({ r: c.room }) },
};

const RANKED: RoomRole[] = ['GUEST', 'MEMBER', 'MODERATOR', 'ADMIN', 'OWNER'];
const below = (role: RoomRole) => RANKED.slice(0, RANKED.indexOf(role));
const NO_ROLE = ['OUTSIDER', 'FORMER_MEMBER', 'BANNED'] as const;

describe('the permission matrix', () => {
  const swept = Object.keys(REQUIRED_ROLE).filter((action) => action !== 'SKIP_SLOW_MODE') as RoomAction[];

  it.each(swept)('%s: refused to every role below the one it needs and to those with none, done by that role', async (action) => {
    const { doc, vars, hidden } = ACTIONS[action];
    const needed = REQUIRED_ROLE[action];
    const cast = await castRoom();
    for (const who of [...NO_ROLE, ...below(needed)]) {
      const answer = await run(doc, vars(cast), cast.people[who]);
      if (hidden && !answer.errors) {
        expect(hidden(answer.data!), `${action} as ${who} shows nothing`).toBe(true);
        continue;
      }
      const expected = who === 'BANNED' && action === 'POST' ? ['BANNED'] : ['FORBIDDEN'];
      expect(codes(answer), `${action} as ${who}`).toEqual(expected);
    }
    const done = await run(doc, vars(cast), cast.people[needed]);
    expect(done.errors, `${action} as ${needed}`).toBeUndefined();
    if (hidden) expect(hidden(done.data!), `${action} as ${needed} shows it`).toBe(false);
  });

  it('POST covers typing: a guest is refused, a member is heard', async () => {
    const cast = await castRoom();
    const typing = 'mutation($r: String!) { sendTyping(roomName: $r) }';
    expect(codes(await run(typing, { r: cast.room }, cast.people.GUEST))).toEqual(['FORBIDDEN']);
    expect((await run(typing, { r: cast.room }, cast.people.MEMBER)).data).toEqual({ sendTyping: true });
  });

  it('SKIP_SLOW_MODE: a member waits out slow mode, a moderator does not', async () => {
    const cast = await castRoom();
    await gqlOk(app, 'mutation($r: String!) { setSlowMode(roomName: $r, seconds: 600) { name } }' as never, { r: cast.room } as never, cast.people.OWNER.token);
    const twice = async (who: Who) => {
      const doc = ACTIONS.POST.doc;
      await run(doc, { r: cast.room }, cast.people[who]);
      return run(doc, { r: cast.room }, cast.people[who]);
    };
    expect(codes(await twice('MEMBER'))).toEqual(['RATE_LIMITED']);
    expect((await twice('MODERATOR')).errors).toBeUndefined();
  });

  it('nobody acts on their equal or their better: a moderator on a moderator is FORBIDDEN, anyone on the owner BAD_USER_INPUT', async () => {
    const cast = await castRoom();
    const other = cast.target;
    await gqlOk(app, ACTIONS.CHANGE_ROLES.doc as never, { r: cast.room, l: other.login } as never, cast.people.OWNER.token);
    for (const action of ['REMOVE', 'BAN', 'MUTE'] as const) {
      const onModerator = await run(ACTIONS[action].doc, { r: cast.room, l: other.login }, cast.people.MODERATOR);
      expect(codes(onModerator), `${action} a moderator as a moderator`).toEqual(['FORBIDDEN']);
      const onOwner = await run(ACTIONS[action].doc, { r: cast.room, l: cast.people.OWNER.login }, cast.people.MODERATOR);
      expect([codes(onOwner), onOwner.errors?.[0]?.extensions?.field], `${action} the owner`).toEqual([['BAD_USER_INPUT'], 'login']);
    }
    // The owner acts on a moderator, and so does an admin; an admin does not act on an admin, nor give that role.
    expect((await run(ACTIONS.MUTE.doc, { r: cast.room, l: other.login }, cast.people.OWNER)).errors).toBeUndefined();
    expect((await run(ACTIONS.MUTE.doc, { r: cast.room, l: other.login }, cast.people.ADMIN)).errors).toBeUndefined();
    const setRole = 'mutation($r: String!, $l: String!, $role: RoomRole!) { setRoomRole(roomName: $r, login: $l, role: $role) { name } }';
    expect(codes(await run(setRole, { r: cast.room, l: cast.people.MEMBER.login, role: 'ADMIN' }, cast.people.ADMIN))).toEqual(['FORBIDDEN']);
    await gqlOk(app, setRole as never, { r: cast.room, l: other.login, role: 'ADMIN' } as never, cast.people.OWNER.token);
    expect(codes(await run(ACTIONS.MUTE.doc, { r: cast.room, l: other.login }, cast.people.ADMIN))).toEqual(['FORBIDDEN']);
    expect(codes(await run(setRole, { r: cast.room, l: other.login, role: 'GUEST' }, cast.people.ADMIN))).toEqual(['FORBIDDEN']);
    // An admin hides a member's message, not the owner's.
    expect(codes(await run(ACTIONS.REMOVE_ANY_MESSAGE.doc, { m: cast.ownersMessage }, cast.people.ADMIN))).toEqual(['FORBIDDEN']);
    const asOwner = await run(setRole, { r: cast.room, l: other.login, role: 'OWNER' }, cast.people.OWNER);
    expect([codes(asOwner), asOwner.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'role']);
  });

  it('Room.viewerRole tells each person their role, and null to a former member', async () => {
    const cast = await castRoom();
    const roleOf = async (who: Who) =>
      ((await run('query($r: String!) { room(roomName: $r) { viewerRole } }', { r: cast.room }, cast.people[who])).data?.room as { viewerRole: string | null } | null)?.viewerRole;
    for (const role of RANKED) expect(await roleOf(role)).toBe(role);
    expect(await roleOf('FORMER_MEMBER')).toBeNull();
  });
});

describe("docs/api.md's permission matrix", () => {
  it('lists every action with the role the code requires, and nothing else', () => {
    const docs = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
    const section = docs.slice(docs.indexOf('## Roles and permissions'));
    const table = section.slice(0, section.indexOf('\n## ') === -1 ? undefined : section.indexOf('\n## '));
    const rows = [...table.matchAll(/^\| [^\n]+ \| `([A-Z_]+)` \| `([A-Z]+)` \|$/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(rows)).toEqual(REQUIRED_ROLE);
  });
});
