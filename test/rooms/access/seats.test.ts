/**
 * The participant cap held exactly by seats (cql/030_room_seats.cql), over HTTP on two instances: invitations accepted
 * at once into a room a few seats short of full let in exactly as many as there are seats left, the rest told
 * LIMIT_REACHED; leaving (the owner's too), a removal and a ban free their seats; a room past the cap from before
 * seats takes nobody until it holds fewer than the cap, then exactly up to it; a room written before seats is seated
 * by its first join, and by `seats:backfill`, a resumable job, tested on rows written in the old form (run at RF 3
 * too: vitest.cluster.config.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { SeatsBackfillStore } from '../../../src/db/rooms/seats-backfill.js';
import { backfillSeats } from '../../../src/resolvers/rooms/seats-backfill.js';
import { Limits } from '../../../src/limits.js';
import { startApp } from '../../testkit/app.js';
import { codes, dataOf as ok, gqlAs } from '../../testkit/http.js';
import { signUp, signUpMany, type TestUser } from '../../testkit/data/users.js';
import { roomWith, uniqueRoomName } from '../../testkit/data/rooms.js';
import { cqlRow, cqlRows } from '../../testkit/cql.js';

let a: App;
let b: App;
beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
}, 60_000);

const CAP = Limits.room.maxParticipants;
const INVITE = 'mutation($r: String!, $l: String!) { inviteToRoom(roomName: $r, login: $l) { createdAt } }';
const ACCEPT = 'mutation($r: String!) { acceptInvitation(roomName: $r) { name } }';

/** The room's participants and seats as stored, and whether they agree: one seat below the cap per participant. */
async function seatsOf(name: string) {
  const row = await cqlRow(a, 'SELECT participants, seats, seat_of FROM chat_rooms WHERE room_name = ?', [name]);
  const logins = [...new Set([...((row?.participants as Set<{ login: string }> | null) ?? [])].map((p) => p.login))].sort();
  const seatOf = Object.entries((row?.seat_of ?? {}) as Record<string, number>);
  const seats = Object.entries((row?.seats ?? {}) as Record<string, string>);
  const inOrder =
    seatOf.map(([login]) => login).sort().join() === logins.join() &&
    seats.length === seatOf.length &&
    seatOf.every(([login, seat]) => row?.seats?.[seat] === login && seat >= 0 && seat < CAP);
  return { logins, seatOf: Object.fromEntries(seatOf), inOrder };
}

/** Stores `count` made-up participants in the room the way a row written before seats holds them: no seats at all. */
async function fillInTheOldForm(name: string, count: number): Promise<void> {
  const tag = name.slice(-6);
  const fillers = Array.from({ length: count }, (_, i) => ({ login: `f${i}-${tag}`, firstname: 'Filler', lastname: String(i) }));
  await cqlRows(a, 'UPDATE chat_rooms SET participants = participants + ?, seats = null, seat_of = null WHERE room_name = ?', [new Set(fillers), name]);
}

/** Invites each of `people` to `owner`'s room, then they all accept at once, half on each instance: the codes each got. */
async function acceptAtOnce(name: string, owner: TestUser, people: TestUser[]): Promise<unknown[][]> {
  for (const person of people) await ok(gqlAs(a, INVITE, { r: name, l: person.login }, owner));
  return Promise.all(people.map(async (person, i) => codes(await gqlAs(i % 2 === 0 ? a : b, ACCEPT, { r: name }, person))));
}

const tally = (outcomes: unknown[][]) => ({
  joined: outcomes.filter((c) => c.length === 0).length,
  full: outcomes.filter((c) => c.join() === 'LIMIT_REACHED').length,
  other: outcomes.filter((c) => c.length > 0 && c.join() !== 'LIMIT_REACHED'),
});

describe('the participant cap', () => {
  it('lets in exactly as many accepted invitations as seats are left, on two instances; a leave, a removal and a ban each free one', async () => {
    const owner = await signUp(a);
    const name = uniqueRoomName('seats');
    await ok(gqlAs(a, 'mutation($n: String!) { createRoom(input: { name: $n, visibility: PRIVATE }) { name } }', { n: name }, owner));
    await fillInTheOldForm(name, CAP - 4 - 1);
    expect(await seatsOf(name)).toMatchObject({ inOrder: false });

    const first = await signUpMany(a, 12, 'seat');
    expect(tally(await acceptAtOnce(name, owner, first))).toEqual({ joined: 4, full: 8, other: [] });
    const full = await seatsOf(name);
    expect([full.logins.length, full.inOrder]).toEqual([CAP, true]);

    const inside = first.filter((person) => full.logins.includes(person.login));
    await ok(gqlAs(b, 'mutation($r: String!) { leaveRoom(roomName: $r) }', { r: name }, inside[0]!));
    await ok(gqlAs(a, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l) { name } }', { r: name, l: inside[1]!.login }, owner));
    await ok(gqlAs(b, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l, ban: true) { name } }', { r: name, l: inside[2]!.login }, owner));
    const freed = await seatsOf(name);
    expect([freed.logins.length, freed.inOrder]).toEqual([CAP - 3, true]);

    const second = await signUpMany(a, 7, 'seat');
    expect(tally(await acceptAtOnce(name, owner, second))).toEqual({ joined: 3, full: 4, other: [] });
    const after = await seatsOf(name);
    expect([after.logins.length, after.inOrder]).toEqual([CAP, true]);
    const count = await ok(gqlAs(a, 'query($r: String!) { room(roomName: $r) { participantCount } }', { r: name }, owner));
    expect(count).toEqual({ room: { participantCount: CAP } });
    // The owner's leave (which hands the room on) frees theirs too.
    await ok(gqlAs(a, 'mutation($r: String!) { leaveRoom(roomName: $r) }', { r: name }, owner));
    const left = await seatsOf(name);
    expect([left.logins.length, left.inOrder, owner.login in left.seatOf]).toEqual([CAP - 1, true, false]);
  });

  it('keeps a room past the cap from before seats closed until it holds fewer than the cap, then fills it exactly to it', async () => {
    const owner = await signUp(a);
    const name = uniqueRoomName('over');
    await ok(gqlAs(a, 'mutation($n: String!) { createRoom(input: { name: $n }) { name } }', { n: name }, owner));
    await fillInTheOldForm(name, CAP + 4); // 1,005 with the owner
    const join = (people: TestUser[]) =>
      Promise.all(people.map(async (person, i) => codes(await gqlAs(i % 2 === 0 ? a : b, 'mutation($r: String!) { joinRoom(roomName: $r) { name } }', { r: name }, person))));
    expect(tally(await join(await signUpMany(a, 3, 'over')))).toEqual({ joined: 0, full: 3, other: [] });
    // The backfill seats it: 0 to 1,004. Six people on seats below the cap go: 999 are left, five of them on seats
    // from the cap up.
    await backfillSeats({ seatsBackfill: new SeatsBackfillStore(a.services.db), rooms: a.services.stores.rooms });
    const seated = (await seatsOf(name)).seatOf as Record<string, number>;
    expect(Object.values(seated).filter((seat) => seat >= CAP)).toHaveLength(5);
    const low = Object.keys(seated).filter((login) => seated[login]! < 6);
    expect(low).toHaveLength(6);
    for (const login of low) await ok(gqlAs(a, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l) { name } }', { r: name, l: login }, owner));
    expect((await seatsOf(name)).logins).toHaveLength(CAP - 1);
    expect(tally(await join(await signUpMany(a, 4, 'over')))).toEqual({ joined: 1, full: 3, other: [] });
    const after = await seatsOf(name);
    expect([after.logins.length, after.inOrder]).toEqual([CAP, true]);
  });
});

describe('npm run seats:backfill', () => {
  it('seats rooms written before seats, resumes where it stopped, and changes nothing when run again', async () => {
    const [owner, ...members] = await signUpMany(a, 4, 'sb');
    const rooms = [await roomWith(a, owner!, members), await roomWith(a, owner!, members.slice(0, 1)), await roomWith(a, owner!)];
    for (const name of rooms) await cqlRows(a, 'UPDATE chat_rooms SET seats = null, seat_of = null WHERE room_name = ?', [name]);
    // A seat left to someone who no longer takes part (a leave by an instance that knew no seats): it is freed.
    await cqlRows(a, "UPDATE chat_rooms SET seats = {7: 'ghost'}, seat_of = {'ghost': 7} WHERE room_name = ?", [rooms[1]]);
    for (const name of rooms) expect((await seatsOf(name)).inOrder, name).toBe(false);

    const stores = { seatsBackfill: new SeatsBackfillStore(a.services.db), rooms: a.services.stores.rooms };
    await stores.seatsBackfill.progress.clear();
    // Stopped after its first page, recorded.
    const stop = new Error('stopped');
    await expect(backfillSeats(stores, { pageRows: 20, onPage: () => { throw stop; } })).rejects.toBe(stop);
    const recorded = await stores.seatsBackfill.progress.resumeToken();
    expect(recorded).not.toBeNull();

    const resumed = await backfillSeats(stores);
    expect(resumed.resumedFrom).toBe(recorded!.toString());
    expect(await stores.seatsBackfill.progress.resumeToken()).toBeNull();
    const seated = await Promise.all(rooms.map(seatsOf));
    expect(seated.map((s) => [s.inOrder, s.logins.length])).toEqual([[true, 4], [true, 2], [true, 1]]);
    expect(seated[1]!.seatOf).not.toHaveProperty('ghost');

    await backfillSeats(stores);
    expect(await Promise.all(rooms.map(seatsOf))).toEqual(seated);
    // Seated, each room takes joins by its seats.
    const late = await signUp(a);
    await ok(gqlAs(b, 'mutation($r: String!) { joinRoom(roomName: $r) { name } }', { r: rooms[2] }, late));
    expect(await seatsOf(rooms[2]!)).toMatchObject({ inOrder: true, logins: [owner!.login, late.login].sort() });
  });
});
