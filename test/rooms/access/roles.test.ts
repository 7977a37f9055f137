/**
 * Ownership and roles over HTTP, on two instances: the owner hands the room on, and leaving hands it on by the
 * documented rule (the first by login of those of the highest role); a room is never without an owner; a transfer
 * racing the heir's leave, the former owner's action racing the transfer, and an admin's ban racing their demotion
 * each take one order. The races run at RF 3 too (vitest.cluster.config.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { startApp } from '../../testkit/app.js';
import { codes, gqlAs, gqlOk, type GqlResult } from '../../testkit/http.js';
import { signUp, signUpMany, type TestUser } from '../../testkit/data/users.js';
import { rawChatRooms, rawRoomRow, roomWith } from '../../testkit/data/rooms.js';
import { onNextStatement } from '../../testkit/faults/statement-faults.js';

let a: App;
let b: App;

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
}, 60_000);


const TRANSFER = 'mutation($r: String!, $l: String!) { transferRoomOwnership(roomName: $r, login: $l) { owner { login } } }';
const LEAVE = 'mutation($r: String!) { leaveRoom(roomName: $r) }';
const NAME_MODERATOR = 'mutation($r: String!, $l: String!) { setRoomModerator(roomName: $r, login: $l, moderator: true) { name } }';
const SLOW_MODE = 'mutation($r: String!) { setSlowMode(roomName: $r, seconds: 30) { slowModeSeconds } }';

const roleOf = async (name: string, user: TestUser) =>
  ((await gqlAs(a, 'query($r: String!) { room(roomName: $r) { viewerRole } }', { r: name }, user)).data?.room as { viewerRole: string | null } | null)?.viewerRole;

/** Who takes part in the (public) room as stored, and who owns it as `viewer` is told. */
async function stored(name: string, viewer: TestUser) {
  const row = await rawRoomRow(a, name);
  const owner = (await gqlOk(a, 'query($r: String!) { room(roomName: $r) { owner { login } } }' as never, { r: name } as never, viewer.token)) as { room: { owner: { login: string } } | null };
  return { participants: [...((row?.participants as Set<{ login: string }> | null) ?? [])].map((p) => p.login), owner: owner.room?.owner.login };
}

/** People sorted by login, so the heir rule's order is the test's. */
const byLogin = (people: TestUser[]) => [...people].sort((x, y) => (x.login < y.login ? -1 : 1));

describe("a room's ownership", () => {
  it('is handed on by its owner, who then acts as a member; the new owner acts as the owner', async () => {
    const [owner, heir] = byLogin(await signUpMany(a, 2, 'own'));
    const name = await roomWith(a, owner!, [heir!]);
    await gqlOk(a, NAME_MODERATOR as never, { r: name, l: heir!.login } as never, owner!.token);
    expect(codes(await gqlAs(a, TRANSFER, { r: name, l: heir!.login }, heir!))).toEqual(['FORBIDDEN']);
    const outsider = await signUp(a);
    const notIn = await gqlAs(a, TRANSFER, { r: name, l: outsider.login }, owner!);
    expect([codes(notIn), notIn.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'login']);

    expect((await gqlAs(b, TRANSFER, { r: name, l: heir!.login }, owner!)).data).toEqual({ transferRoomOwnership: { owner: { login: heir!.login } } });
    expect([await roleOf(name, heir!), await roleOf(name, owner!)]).toEqual(['OWNER', 'MEMBER']);
    expect(codes(await gqlAs(a, SLOW_MODE, { r: name }, owner!))).toEqual(['FORBIDDEN']);
    expect((await gqlAs(a, SLOW_MODE, { r: name }, heir!)).errors).toBeUndefined();
    // The former owner is a member now: the new owner removes them.
    expect((await gqlAs(a, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l) { name } }', { r: name, l: owner!.login }, heir!)).errors).toBeUndefined();
    expect(await roleOf(name, owner!)).toBeNull();
  });

  it('passes, when the owner leaves, to the first moderator by login, else the first participant by login; alone, the owner keeps it', async () => {
    const people = byLogin(await signUpMany(a, 4, 'heir'));
    const [owner, first, second, third] = people;
    const name = await roomWith(a, owner!, [first!, second!, third!]);
    await gqlOk(a, NAME_MODERATOR as never, { r: name, l: third!.login } as never, owner!.token);
    // A moderator comes before any member, whatever their logins.
    expect((await gqlAs(a, LEAVE, { r: name }, owner!)).data).toEqual({ leaveRoom: true });
    expect(await roleOf(name, third!)).toBe('OWNER');
    expect(await roleOf(name, owner!)).toBeNull();
    // The heir leaves the role they had: handed on again, the room leaves them a member.
    expect(((await rawRoomRow(a, name))?.moderators as Set<string> | null) ?? new Set()).not.toContain(third!.login);
    // No moderator left: the first participant by login.
    expect((await gqlAs(b, LEAVE, { r: name }, third!)).data).toEqual({ leaveRoom: true });
    expect(await roleOf(name, first!)).toBe('OWNER');
    await gqlOk(a, LEAVE as never, { r: name } as never, second!.token);
    // Alone, the owner leaves and keeps the room.
    expect((await gqlAs(a, LEAVE, { r: name }, first!)).data).toEqual({ leaveRoom: true });
    expect(await stored(name, second!)).toEqual({ participants: [], owner: first!.login });
    expect(await roleOf(name, first!)).toBe('OWNER');
  });
});

describe('a transfer racing the heir leaving', () => {
  type Outcome = 'leftFirst' | 'transferredFirst';

  /**
   * One round on a fresh room of the owner, the heir and a bystander: the owner hands the room to the heir while
   * the heir leaves it, on the two instances, at once or in the order `staged` asks. Either the leave comes first
   * (the transfer is refused, the owner keeps the room) or the heir leaves as its owner and hands it on, by the
   * rule, to the first of the others by login. The owner is never someone who left.
   */
  async function round(owner: TestUser, heir: TestUser, bystander: TestUser, i: number, staged?: Outcome): Promise<Outcome> {
    const name = await roomWith(a, owner, [heir, bystander]);
    const [transferOn, leaveOn] = i % 2 ? [a, b] : [b, a];
    const transfer = () => gqlAs(transferOn, TRANSFER, { r: name, l: heir.login }, owner);
    const leave = () => gqlAs(leaveOn, LEAVE, { r: name }, heir);
    let transferred: GqlResult<Record<string, unknown>> | undefined;
    let left: GqlResult<Record<string, unknown>> | undefined;
    if (staged === 'leftFirst') {
      const hook = onNextStatement(transferOn, /SET owner_login = \?, moderators/, async () => void (left = await leave()));
      transferred = await transfer();
      expect(hook.fired()).toBe(true);
    } else if (staged === 'transferredFirst') {
      const hook = onNextStatement(leaveOn, /SET participants = participants - \?/, async () => void (transferred = await transfer()));
      left = await leave();
      expect(hook.fired()).toBe(true);
    } else {
      [transferred, left] = await Promise.all([transfer(), leave()]);
    }
    expect(left!.data).toEqual({ leaveRoom: true });
    const after = await stored(name, bystander);
    expect(after.participants).not.toContain(heir.login);
    if (transferred!.errors) {
      expect(codes(transferred!)).toEqual(['BAD_USER_INPUT']);
      expect(after.owner).toBe(owner.login);
      return 'leftFirst';
    }
    // The heir owned it, then left: the ownership went on to the first of the others by login.
    expect(after.owner).toBe([owner.login, bystander.login].sort()[0]);
    expect(after.participants).toContain(after.owner);
    return 'transferredFirst';
  }

  it('holds: the room never belongs to someone who left (each order staged once, then 20 rounds at once)', async () => {
    const people = await signUpMany(a, 66, 'race');
    const trio = (k: number) => [people[3 * k]!, people[3 * k + 1]!, people[3 * k + 2]!] as const;
    expect(await round(...trio(0), 0, 'leftFirst')).toBe('leftFirst');
    expect(await round(...trio(1), 1, 'transferredFirst')).toBe('transferredFirst');
    for (let k = 2; k < 22; k++) await round(...trio(k), k);
  });
});

describe("the former owner's action racing the transfer", () => {
  it.each([
    ['setSlowMode', /SET slow_mode_seconds = \?/, SLOW_MODE, 'query($r: String!) { room(roomName: $r) { slowModeSeconds } }', { slowModeSeconds: null }],
    ['pinMessage', /SET pinned_messages = \?/, 'mutation($m: ID!) { pinMessage(messageId: $m) { id } }', 'query($r: String!) { room(roomName: $r) { pinnedMessages { id } } }', { pinnedMessages: [] }],
  ] as const)('%s applies before it or not at all: staged after it, FORBIDDEN and nothing changes', async (_name, statement, doc, read, unchanged) => {
    const [owner, heir] = await signUpMany(a, 2, 'former');
    const name = await roomWith(a, owner!, [heir!]);
    const message = await gqlOk(a, 'mutation($r: String!) { postMessage(roomName: $r, content: "pin me") { id } }' as never, { r: name } as never, heir!.token);
    const hook = onNextStatement(a, statement, async () => void (await gqlOk(b, TRANSFER as never, { r: name, l: heir!.login } as never, owner!.token)));
    const m = (message as { postMessage: { id: string } }).postMessage.id;
    expect(codes(await gqlAs(a, doc, { r: name, m }, owner!))).toEqual(['FORBIDDEN']);
    expect(hook.fired()).toBe(true);
    expect((await gqlAs(a, read, { r: name }, heir!)).data?.room).toEqual(unchanged);
  });
});

describe("an admin's action racing their demotion", () => {
  it.each([
    ['ban', 'MODERATOR', true, /SET banned\[\?\]/],
    ['ban', 'MEMBER', true, /SET banned\[\?\]/],
    ['removal', 'MODERATOR', false, /SET participants = participants - \?/],
    ['removal', 'MEMBER', false, /SET participants = participants - \?/],
  ] as const)('demoted before their %s is sent, to %s: applied as a moderator, or FORBIDDEN with the member staying', async (_what, lower, ban, statement) => {
    const [owner, admin, member] = await signUpMany(a, 3, 'admin');
    const name = await roomWith(a, owner!, [admin!, member!]);
    const setRole = 'mutation($r: String!, $l: String!, $role: RoomRole!) { setRoomRole(roomName: $r, login: $l, role: $role) { name } }';
    await gqlOk(a, setRole as never, { r: name, l: admin!.login, role: 'ADMIN' } as never, owner!.token);
    const hook = onNextStatement(a, statement, async () => void (await gqlOk(b, setRole as never, { r: name, l: admin!.login, role: lower } as never, owner!.token)));
    const removal = await gqlAs(a, 'mutation($r: String!, $l: String!, $b: Boolean!) { removeParticipant(roomName: $r, login: $l, ban: $b) { name } }', { r: name, l: member!.login, b: ban }, admin!);
    expect(hook.fired(), JSON.stringify(removal)).toBe(true);
    if (lower === 'MEMBER') expect(codes(removal)).toEqual(['FORBIDDEN']);
    else expect(removal.errors).toBeUndefined(); // a moderator still removes a member: it applies, as the moderator's
    expect((await stored(name, owner!)).participants.includes(member!.login)).toBe(lower === 'MEMBER');
    expect(await roleOf(name, admin!)).toBe(lower);
    // Their own list of rooms says the same as the room: it names the room while they take part.
    expect((await rawChatRooms(a, member!.login)).has(name), 'the member\'s list names the room').toBe(lower === 'MEMBER');
  });
});

describe('a ban racing the transfer of the room to the person banned', () => {
  it('does not apply after it: the new owner stays, and the ban is refused as one on the owner', async () => {
    const [owner, admin, heir] = await signUpMany(a, 3, 'banown');
    const name = await roomWith(a, owner!, [admin!, heir!]);
    const setRole = 'mutation($r: String!, $l: String!, $role: RoomRole!) { setRoomRole(roomName: $r, login: $l, role: $role) { name } }';
    await gqlOk(a, setRole as never, { r: name, l: admin!.login, role: 'ADMIN' } as never, owner!.token);
    const hook = onNextStatement(a, /SET banned\[\?\]/, async () => void (await gqlOk(b, TRANSFER as never, { r: name, l: heir!.login } as never, owner!.token)));
    const ban = await gqlAs(a, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l, ban: true) { name } }', { r: name, l: heir!.login }, admin!);
    expect(hook.fired()).toBe(true);
    expect([codes(ban), ban.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'login']);
    const after = await stored(name, owner!);
    expect([after.owner, after.participants.includes(heir!.login)]).toEqual([heir!.login, true]);
  });
});
