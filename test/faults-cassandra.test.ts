/**
 * Cassandra made unreachable for real (a TCP proxy in front of the node is
 * closed, then opened again): during the outage every request is told to
 * retry (SERVICE_UNAVAILABLE, never INTERNAL_SERVER_ERROR), /ready fails, and
 * no one is locked out; afterwards the instance is ready within 2 s of CQL
 * answering and logins work at once.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../src/app.js';
import { LoginDocument, MeDocument } from './generated/graphql.js';
import { startApp } from './testkit/app.js';
import { codes, gql } from './testkit/http.js';
import { eventually } from './testkit/poll.js';
import { TcpProxy } from './testkit/tcp-proxy.js';
import { signUp, type TestUser } from './testkit/users.js';

let proxy: TcpProxy;
let app: App;
let user: TestUser;
beforeAll(async () => {
  const [host, port] = inject('cassandraContactPoint').split(':');
  proxy = new TcpProxy(host!, Number(port));
  await proxy.open();
  // The default limits: 5 failures per login, 20 per address.
  app = await startApp({ env: { CASSANDRA_CONTACT_POINTS: `127.0.0.1:${proxy.port}` } });
  user = await signUp(app);
});
afterAll(async () => {
  if (!proxy.isOpen) await proxy.open();
});

/** The outage lasts this long: long enough for the driver's default backoff (1, 2, 4 s…) to have grown past 2 s. */
const OUTAGE_MS = 8_000;

describe('Cassandra unreachable, then back', () => {
  it('answers SERVICE_UNAVAILABLE during, is ready within 2 s of CQL answering, and locks no one out', async () => {
    await proxy.close();
    expect((await fetch(`${app.url}/ready`)).status).toBe(503);

    // More attempts than either limit allows, all with the right password.
    for (let i = 0; i < 25; i++) {
      const res = await gql(app, LoginDocument, { login: user.login, password: user.password });
      expect(codes(res)).toEqual(['SERVICE_UNAVAILABLE']);
      expect(res.errors?.[0]?.extensions?.retryAfter).toBeGreaterThan(0);
    }
    // Clients keep coming for the rest of the outage; every one is told to retry.
    const until = Date.now() + OUTAGE_MS;
    let during = 0;
    while (Date.now() < until) {
      const me = await gql(app, MeDocument, {}, user.token);
      expect(codes(me)).toEqual(['SERVICE_UNAVAILABLE']);
      during += 1;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(during).toBeGreaterThan(10);

    await proxy.open();
    // CQL answers through the proxy from this moment: the app must follow within 2 s.
    await eventually(async () => (await fetch(`${app.url}/ready`)).status === 200, {
      timeoutMs: 2_000,
      intervalMs: 50,
      what: '/ready within 2 s of CQL answering',
    });
    const login = await gql(app, LoginDocument, { login: user.login, password: user.password });
    expect(login.errors).toBeUndefined();
    expect(login.data?.login.user.login).toBe(user.login);
    expect((await gql(app, MeDocument, {}, user.token)).data?.me?.login).toBe(user.login);
  });
});
