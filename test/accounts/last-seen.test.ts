/**
 * lastSeenAt outlives Redis. Presence keeps its sightings in Redis, which
 * these servers run without persistence (as many deployments do): a restart
 * empties it. When a user goes offline the time is also stored with their
 * account, so a server whose Redis came back empty still answers it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { OnlineParticipantsDocument, RoomEventsDocument, UserLastSeenDocument } from '../generated/graphql.js';
import { startApp, stopApp } from '../testkit/app.js';
import { gql, gqlOk } from '../testkit/http.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { roomWith } from '../testkit/data/rooms.js';
import { roomFeed } from '../testkit/feeds.js';
import { eventually } from '../testkit/poll.js';
import { cqlRows } from '../testkit/cql.js';
import { RedisServer } from '../testkit/faults/redis-server.js';

let redis: RedisServer;
let app: App;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  redis = await RedisServer.start();
  app = await startApp({ redis: true, env: { REDIS_URL: redis.url, PRESENCE_TTL_SECONDS: '2' } });
  [alice, bob] = await Promise.all([signUp(app), signUp(app)]);
});
afterAll(async () => {
  await stopApp(app);
  await redis.stop();
});

const onlineIn = async (name: string) =>
  (await gqlOk(app, OnlineParticipantsDocument, { roomName: name }, alice.token)).room!.onlineParticipants.map((u) => u.login);

const lastSeenOf = async (user: TestUser) => (await gqlOk(app, UserLastSeenDocument, { login: user.login }, alice.token)).user!.lastSeenAt;

const storedLastSeen = async (user: TestUser) =>
  ((await cqlRows(app, 'SELECT last_seen_at FROM users WHERE login = ?', [user.login]))[0]?.last_seen_at as Date | null) ?? null;

describe('lastSeenAt', () => {
  it('is kept across a Redis restart that lost every key', async () => {
    const name = await roomWith(app, alice, [bob]);
    expect(await lastSeenOf(bob)).toBeNull();
    const feed = await roomFeed(app, bob.token, RoomEventsDocument, { roomName: name });
    await eventually(async () => (await onlineIn(name)).includes(bob.login), { what: 'bob online' });
    await feed.client.dispose();
    await eventually(async () => (await storedLastSeen(bob)) !== null, { what: "bob's last sighting stored" });
    expect(await onlineIn(name)).not.toContain(bob.login);
    const seen = await lastSeenOf(bob);
    expect(Date.parse(seen!)).toBeGreaterThan(Date.now() - 60_000);
    expect(new Date(seen!)).toEqual(await storedLastSeen(bob));

    await redis.stop();
    await redis.start();
    // Redis is back, empty: the answer comes from the account.
    const after = await eventually(
      async () => {
        const result = await gql(app, UserLastSeenDocument, { login: bob.login }, alice.token);
        return result.errors ? undefined : { lastSeenAt: result.data!.user!.lastSeenAt };
      },
      { what: 'an answer once Redis is back' },
    );
    expect(after).toEqual({ lastSeenAt: seen });
  });

  it('keeps the later of two sightings stored in either order', async () => {
    // Two people never online (no sighting in Redis), so the API answers from their accounts.
    const [inOrder, reversed] = await Promise.all([signUp(app), signUp(app)]);
    const later = new Date(Date.now() - 10_000);
    const earlier = new Date(later.getTime() - 5_000);
    const { users } = app.services.stores;
    await users.recordLastSeen(inOrder.login, earlier);
    await users.recordLastSeen(inOrder.login, later);
    await users.recordLastSeen(reversed.login, later);
    await users.recordLastSeen(reversed.login, earlier);
    for (const user of [inOrder, reversed]) {
      expect((await gqlOk(app, UserLastSeenDocument, { login: user.login }, alice.token)).user!.lastSeenAt, user.login).toBe(later.toISOString());
    }
  });
});
