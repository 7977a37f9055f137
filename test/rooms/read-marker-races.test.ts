/**
 * One user's read markers under a burst of marks from two instances at once: every markers' change is an LWT on
 * the user's one partition, so the burst is that partition's hot spot. Each mark is answered (none
 * SERVICE_UNAVAILABLE from Paxos contention), each answer shows a marker at or past what it marked, and each room's
 * marker, and its copy by room, end at the newest message marked.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { MarkRoomReadDocument, type MarkRoomReadMutation } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, type GqlResult } from '../testkit/http.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { messageKey, post, roomWith } from '../testkit/data/rooms.js';
import { cqlRows } from '../testkit/cql.js';

let a: App;
let b: App;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  [alice, bob] = await Promise.all([signUp(a), signUp(a)]);
});

/** Alternates the two instances, so the marks race within each instance and across them. */
const either = (i: number) => (i % 2 === 0 ? a : b);

/** The same order every run, but not the posting order: later marks often land before earlier ones. */
const shuffled = <T>(items: T[]) => items.map((item, i) => ({ item, at: (i * 37) % items.length })).sort((x, y) => x.at - y.at).map((x) => x.item);

/** Bob's markers and their copies by room, straight from storage, as message keys' ids. */
async function storedMarkers(rooms: string[]) {
  const markers = new Map((await cqlRows(a, 'SELECT room_name, read_up_to FROM room_read_markers WHERE login = ?', [bob.login])).map((r) => [r.room_name as string, r.read_up_to.toString() as string]));
  const copies = new Map<string, string>();
  for (const room of rooms) {
    const rows = await cqlRows(a, 'SELECT read_up_to FROM room_readers WHERE room_name = ? AND login = ?', [room, bob.login]);
    if (rows[0]) copies.set(room, rows[0].read_up_to.toString());
  }
  return { markers: new Map(rooms.map((room) => [room, markers.get(room)])), copies };
}

/** Every mark answered with a read state, none an error (a Paxos timeout is SERVICE_UNAVAILABLE). */
function expectAllAnswered(results: Array<GqlResult<MarkRoomReadMutation>>) {
  const failures = results.flatMap(codes);
  console.info(`[read markers] ${results.length} marks at once from two instances: ${results.length - failures.length} answered, failures ${JSON.stringify(failures)}`);
  expect(failures).toEqual([]);
}

describe("one user's read markers, marked from two instances at once", () => {
  it('60 marks in one room: every one answered, never behind what it marked, the marker ends at the newest', async () => {
    const room = await roomWith(a, alice, [bob]);
    const posts: Array<{ id: string }> = [];
    for (let i = 0; i < 60; i++) posts.push(await post(a, alice, room, `m${i}`));
    const marks = shuffled(posts.map((m, i) => ({ m, i })));

    const results = await Promise.all(marks.map(({ m }, k) => gql(either(k), MarkRoomReadDocument, { roomName: room, upTo: m.id }, bob.token)));

    expectAllAnswered(results);
    // A marker only moves forward: each answer shows what it marked, or a newer message.
    results.forEach((r, k) => {
      const shown = posts.findIndex((m) => m.id === r.data?.markRoomRead.lastReadMessage?.id);
      expect(shown).toBeGreaterThanOrEqual(marks[k]!.i);
    });
    const newest = messageKey(posts.at(-1)!.id).messageId;
    const stored = await storedMarkers([room]);
    expect(stored.markers.get(room)).toBe(newest);
    expect(stored.copies.get(room)).toBe(newest);
  });

  it('60 marks over 30 rooms: every one answered, each room ends at its newest message', async () => {
    const rooms = await Promise.all(Array.from({ length: 30 }, () => roomWith(a, alice, [bob])));
    const posted = await Promise.all(rooms.map(async (room) => [await post(a, alice, room, 'older'), await post(a, alice, room, 'newer')] as const));
    const marks = shuffled(rooms.flatMap((room, r) => posted[r]!.map((m) => ({ room, m }))));

    const results = await Promise.all(marks.map(({ room, m }, k) => gql(either(k), MarkRoomReadDocument, { roomName: room, upTo: m.id }, bob.token)));

    expectAllAnswered(results);
    const stored = await storedMarkers(rooms);
    const newest = new Map(rooms.map((room, r) => [room, messageKey(posted[r]![1].id).messageId]));
    expect(stored.markers).toEqual(newest);
    expect(stored.copies).toEqual(newest);
  });
});
