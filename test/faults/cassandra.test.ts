/**
 * Cassandra made unreachable for real (the TCP proxy in front of the node
 * cuts every connection and each one the driver makes to reconnect, then
 * relays again): during the outage every request is told to retry
 * (SERVICE_UNAVAILABLE, never INTERNAL_SERVER_ERROR), /ready fails, and no one
 * is locked out; once CQL answers again the instance becomes ready and
 * logins work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { CreateRoomDocument, LoginDocument, MeDocument } from '../generated/graphql.js';
import { onNextStatement } from '../testkit/faults/statement-faults.js';
import { uniqueRoomName } from '../testkit/data/rooms.js';
import { codes, gql } from '../testkit/http.js';
import { eventually } from '../testkit/poll.js';
import { startAppBehindCassandraProxy, type TcpProxy } from '../testkit/faults/tcp-proxy.js';
import { signUp, type TestUser } from '../testkit/data/users.js';

let proxy: TcpProxy;
let app: App;
let user: TestUser;
beforeAll(async () => {
  // The default limits: 5 failures per login, 20 per address.
  ({ app, proxy } = await startAppBehindCassandraProxy());
  user = await signUp(app);
});
afterAll(async () => {
  // Relaying again, so the instance stops as usual whatever the test left.
  await proxy.open();
});

/**
 * The outage lasts until the driver has tried to reconnect this many times and been cut each time: about seven
 * tries of each of its two connections (control and pool), so its backoff (src/db/cassandra/client.ts) has grown
 * to its ceiling, the case in which coming back must not wait on a long-scheduled attempt.
 */
const RECONNECT_ATTEMPTS = 14;

describe('Cassandra unreachable, then back', () => {
  it('answers SERVICE_UNAVAILABLE during, becomes ready once CQL answers, and locks no one out', async () => {
    proxy.refuseConnections();
    const notReady = await fetch(`${app.url}/ready`);
    expect(notReady.status).toBe(503);
    // It says which service failed, and how.
    expect(((await notReady.json()) as { reason: string }).reason).toMatch(/^Cassandra: .+/);

    // More attempts than either limit allows, all with the right password.
    for (let i = 0; i < 25; i++) {
      const res = await gql(app, LoginDocument, { login: user.login, password: user.password });
      expect(codes(res)).toEqual(['SERVICE_UNAVAILABLE']);
      expect(res.errors?.[0]?.extensions?.retryAfter).toBeGreaterThan(0);
    }
    // Clients keep coming between the driver's attempts to reconnect; every one is told to retry.
    for (let attempt = proxy.refused + 1; proxy.refused < RECONNECT_ATTEMPTS; attempt++) {
      const me = await gql(app, MeDocument, {}, user.token);
      expect(codes(me)).toEqual(['SERVICE_UNAVAILABLE']);
      expect((await fetch(`${app.url}/ready`)).status).toBe(503);
      await eventually(() => proxy.refused >= attempt, { timeoutMs: 30_000, what: `the driver's attempt ${attempt} to reconnect` });
    }

    await proxy.open();
    // CQL answers through the proxy from this moment on: /ready follows, and the logins refused above locked no one out.
    await eventually(async () => (await fetch(`${app.url}/ready`)).status === 200, { timeoutMs: 30_000, intervalMs: 50, what: '/ready once CQL answers' });
    const login = await gql(app, LoginDocument, { login: user.login, password: user.password });
    expect(login.errors).toBeUndefined();
    expect(login.data?.login.user.login).toBe(user.login);
    expect((await gql(app, MeDocument, {}, user.token)).data?.me?.login).toBe(user.login);
  });

  it('a connection lost once an LWT was sent: the outcome is read back, and the answer says it (never an internal error)', async () => {
    const name = uniqueRoomName('lost');
    // createRoom's LWT goes out and applies; its answer is dropped and its connection cut (a coordinator killed
    // mid-request); the proxy relays again at once, as another node would answer.
    const staged = onNextStatement(app, /INSERT INTO chat_rooms .* IF NOT EXISTS/s, async () => {
      proxy.onceRequested(() => {
        proxy.dropReplies();
        proxy.onceRelayed(1, () => {
          proxy.refuseConnections();
          void proxy.open();
        });
      });
    });
    const created = await gql(app, CreateRoomDocument, { input: { name } }, user.token);
    expect(staged.fired()).toBe(true);
    expect(created.errors).toBeUndefined();
    expect(created.data?.createRoom.name).toBe(name);
    // It applied once: the name is taken.
    expect(codes(await gql(app, CreateRoomDocument, { input: { name } }, user.token))).toEqual(['ROOM_EXISTS']);
  });
});
