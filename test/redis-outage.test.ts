/** A Redis outage degrades live features; it never takes logins down or crashes the server. */
import { describe, expect, it } from 'vitest';
import { LoginDocument, MeDocument } from './generated/graphql.js';
import { startApp, REDIS_URL } from './testkit/app.js';
import { codes, gql, gqlOk } from './testkit/http.js';
import { signUp } from './testkit/users.js';
import { TcpProxy } from './testkit/tcp-proxy.js';
import { eventually } from './testkit/poll.js';

describe('Redis unreachable', () => {
  it('keeps logins working (the limiter fails open), fails /ready, and recovers', async () => {
    const { hostname, port } = new URL(REDIS_URL);
    const proxy = new TcpProxy(hostname, Number(port));
    await proxy.open();
    const app = await startApp({ redis: true, env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
    const user = await signUp(app);
    expect((await fetch(`${app.url}/ready`)).status).toBe(200);

    await proxy.close();
    await eventually(async () => (await fetch(`${app.url}/ready`)).status === 503, { what: '/ready to fail' });
    const login = await gql(app, LoginDocument, { login: user.login, password: user.password });
    expect(codes(login)).toEqual([]);
    const token = login.data!.login.token;
    expect((await gqlOk(app, MeDocument, {}, token)).me?.login).toBe(user.login);
    // A wrong password is still refused as such, not with an internal error.
    expect(codes(await gql(app, LoginDocument, { login: user.login, password: 'wrong-password' }))).toEqual([
      'INVALID_CREDENTIALS',
    ]);

    await proxy.open();
    await eventually(async () => (await fetch(`${app.url}/ready`)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: '/ready to recover',
    });
  });
});
