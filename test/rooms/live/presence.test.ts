/**
 * Presence across instances: online while a roomEvents feed is open on any
 * server, offline when the last one closes, and within a stated bound when
 * the server holding it dies without a word (SIGKILL).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { OnlineParticipantsDocument, PresenceEventsDocument, RoomEventsDocument, type PresenceEventsSubscription } from '../../generated/graphql.js';
import { ManualClock, startApp } from '../../testkit/app.js';
import { Limits } from '../../../src/limits.js';
import { startAppProcess } from '../../testkit/app-process.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { roomWith } from '../../testkit/data/rooms.js';
import { presenceFeed, roomFeed, type Feed } from '../../testkit/feeds.js';
import { eventually } from '../../testkit/poll.js';
import { subscribe, wsClient } from '../../testkit/ws.js';
import { cqlRow } from '../../testkit/cql.js';

// Short expiry, so the crash test waits seconds, not half a minute (the default is 30 s).
const PRESENCE = { PRESENCE_TTL_SECONDS: '2' };
let a: App;
let b: App;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true, env: PRESENCE }), startApp({ redis: true, env: PRESENCE })]);
  [alice, bob, carol] = await Promise.all([signUp(a), signUp(a), signUp(a)]);
});

const onlineIn = async (app: App, name: string, viewer: TestUser) =>
  (await gqlOk(app, OnlineParticipantsDocument, { roomName: name }, viewer.token)).room!.onlineParticipants.map((u) => u.login).sort();

/** Opens a roomEvents feed: what makes `user` online in the room. */
async function follow(app: App, user: TestUser, name: string) {
  const feed = await roomFeed(app, user.token, RoomEventsDocument, { roomName: name });
  return feed;
}

/** `user` watching others come and go (roomPresence), after opening their own roomEvents feed. */
async function watch(app: App, user: TestUser, name: string) {
  await follow(app, user, name);
  const feed = await presenceFeed(app, user.token, PresenceEventsDocument, { roomName: name });
  return feed;
}

async function nextPresence(feed: Feed<PresenceEventsSubscription>) {
  const change = (await feed.data(15_000)).roomPresence;
  return { login: change.user.login, online: change.online };
}

describe('presence', () => {
  it('is online while a feed is open on any server, offline once the last closes, with events', async () => {
    const name = await roomWith(a, alice, [bob]);
    const alicesFeed = await watch(a, alice, name);
    expect(await onlineIn(b, name, bob)).toEqual([alice.login]);

    const bobOnB = await follow(b, bob, name);
    expect(await nextPresence(alicesFeed)).toEqual({ login: bob.login, online: true });
    // A second feed of Bob's, on the other server: no news, he was online already.
    const bobOnA = await follow(a, bob, name);
    expect(await onlineIn(a, name, alice)).toEqual([alice.login, bob.login].sort());

    await bobOnB.client.dispose();
    // Still online through his feed on A: the next presence event is his going offline only after that one closes.
    await bobOnA.client.dispose();
    expect(await nextPresence(alicesFeed)).toEqual({ login: bob.login, online: false });
    expect(await onlineIn(a, name, alice)).toEqual([alice.login]);
    const seen = (await gqlOk(a, OnlineParticipantsDocument, { roomName: name }, alice.token)).room!.onlineParticipants[0]!.lastSeenAt;
    expect(Date.parse(seen!)).toBeGreaterThan(Date.now() - 60_000);
    expect(codes(await gql(a, OnlineParticipantsDocument, { roomName: name }, carol.token))).toEqual(['FORBIDDEN']);
  });

  it('takes the users of a server killed without shutdown offline, announced once their entries expire', async () => {
    const name = await roomWith(a, alice, [carol]);
    const alicesFeed = await watch(a, alice, name);
    const doomed = await startAppProcess({ redis: true, env: PRESENCE });
    // A process of its own (no services to look into): Alice's feed says when Carol's is live.
    const carolsClient = wsClient(doomed.app, carol.token);
    subscribe(carolsClient, RoomEventsDocument, { roomName: name });
    expect(await nextPresence(alicesFeed)).toEqual({ login: carol.login, online: true });
    expect(await onlineIn(a, name, alice)).toEqual([alice.login, carol.login].sort());

    const killedAt = Date.now();
    await doomed.kill();
    // Found by a sweep once her entry expired without a heartbeat (within about 4/3 of the TTL: a figure for the
    // bench, not asserted here); the offline event comes next on Alice's feed.
    expect(await nextPresence(alicesFeed)).toEqual({ login: carol.login, online: false });
    await eventually(async () => (await onlineIn(b, name, alice)).join() === alice.login, { what: 'carol gone from the list' });
    // The instance that found her gone stored her last heartbeat with her account (it outlives Redis's record).
    const stored = await eventually(async () => (await cqlRow(a, 'SELECT last_seen_at FROM users WHERE login = ?', [carol.login]))?.last_seen_at as Date | null, {
      what: "carol's last sighting stored",
    });
    expect(stored.getTime()).toBeGreaterThan(killedAt - 2_000);
    expect(stored.getTime()).toBeLessThanOrEqual(killedAt);
    void Promise.resolve(carolsClient.dispose()).catch(() => undefined);
  });

  it('tells a follower of roomPresence alone that the users of a killed server went offline', async () => {
    const name = await roomWith(a, alice, [carol]);
    // Alice follows presence on B and opens no roomEvents feed anywhere: no instance but the doomed one has one.
    const alicesPresence = await presenceFeed(b, alice.token, PresenceEventsDocument, { roomName: name });
    const doomed = await startAppProcess({ redis: true, env: PRESENCE });
    const carolsClient = wsClient(doomed.app, carol.token);
    subscribe(carolsClient, RoomEventsDocument, { roomName: name });
    expect(await nextPresence(alicesPresence)).toEqual({ login: carol.login, online: true });

    await doomed.kill();
    expect(await nextPresence(alicesPresence)).toEqual({ login: carol.login, online: false });
    expect(await onlineIn(a, name, alice)).toEqual([]);
    void Promise.resolve(carolsClient.dispose()).catch(() => undefined);
  });

  it('ends the roomPresence of someone removed from the room, at the next re-check, as roomEvents does', async () => {
    const clock = new ManualClock();
    const c = await startApp({ redis: true, env: PRESENCE, clock });
    try {
      const name = await roomWith(c, alice, [bob, carol]);
      const bobs = await watch(c, bob, name);
      await gqlOk(c, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l) { name } }' as never, { r: name, l: bob.login } as never, alice.token);
      clock.advance(Limits.room.participationRecheckMs);
      // Carol comes online: Bob, out of the room, hears nothing of it, and his stream is over.
      await follow(c, carol, name);
      const ended = await Promise.race([bobs.completed.then(() => true), bobs.next(15_000).then(() => false, () => false)]);
      expect(ended, "Bob's roomPresence ends instead of telling him Carol came online").toBe(true);
      expect(bobs.pending()).toBe(0);
    } finally {
      await c.stop();
    }
  });
});
