/**
 * Two app instances sharing one Redis and one Cassandra keyspace, as in
 * production behind a load balancer.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import type { App } from '../../src/app.js';
import { LoginDocument, LogoutDocument, MeDocument, ProfileUpdatedDocument, UpdateProfileDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { signUp, uniqueLogin } from '../testkit/data/users.js';
import { eventually } from '../testkit/poll.js';
import { subscribe, wsClient, wsRequest } from '../testkit/ws.js';
import { profileChannel } from '../../src/resolvers/accounts/accounts.js';
import { WS_CLOSE } from '../../src/server/live/websocket.js';

let a: App;
let b: App;
beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
});

describe('two instances through Redis', () => {
  it('carries an event published on A to a subscriber on B', async () => {
    const alice = await signUp(a);
    const watcher = await signUp(b);
    const client = wsClient(b, watcher.token);
    const sub = subscribe(client, ProfileUpdatedDocument, { login: alice.login });
    // The subscription is live on B once B holds a listener for the channel.
    await eventually(() => b.services.pubsub.listeners(profileChannel(alice.login)) === 1, { what: 'the one listener of the subscription on B' });

    await gqlOk(a, UpdateProfileDocument, { input: { firstname: 'Alicia' } }, alice.token);
    const event = await sub.next();
    expect(event.data?.profileUpdated).toEqual({ login: alice.login, firstname: 'Alicia', lastname: alice.lastname });
    // B is an independent process image: the event crossed Redis, not memory.
    expect(a.services.pubsub.listeners(profileChannel(alice.login))).toBe(0);
    sub.unsubscribe();
    await client.dispose();
  });

  it('refuses a token logged out on A on both instances, over HTTP and WebSocket', async () => {
    const user = await signUp(a);
    const { login } = await gqlOk(b, LoginDocument, { login: user.login, password: user.password });
    const token = login.token;
    const socket = wsClient(b, token);
    expect((await wsRequest(socket, MeDocument)).data?.me?.login).toBe(user.login);

    expect((await gqlOk(a, LogoutDocument, {}, token)).logout).toBe(true);
    expect(codes(await gql(a, MeDocument, {}, token))).toEqual(['UNAUTHENTICATED']);
    // B learns of the revocation through Redis, without reading Cassandra per request.
    await eventually(async () => codes(await gql(b, MeDocument, {}, token))[0] === 'UNAUTHENTICATED', {
      what: 'B to refuse the revoked token',
    });
    // The socket B had open with that token is closed...
    const closed = await socket.closed;
    expect(closed.code).toBe(WS_CLOSE.UNAUTHORIZED);
    expect(closed.reason).toMatch(/revoked/);
    // ...and a new one is refused.
    const again = wsClient(b, token);
    expect((await again.closed).code).toBe(WS_CLOSE.UNAUTHORIZED);
    // The user's other session (from register) still works.
    expect((await gqlOk(b, MeDocument, {}, user.token)).me?.login).toBe(user.login);
  });

  it('loads revocations made before an instance started', async () => {
    const user = await signUp(a);
    await gqlOk(a, LogoutDocument, {}, user.token);
    const late = await startApp({ redis: true });
    expect(codes(await gql(late, MeDocument, {}, user.token))).toEqual(['UNAUTHENTICATED']);
  });

  it('shares login rate limits across instances', async () => {
    const user = await signUp(a);
    const limit = a.services.config.auth.loginFailuresPerLogin;
    for (let i = 0; i < limit; i++) {
      const target = i % 2 === 0 ? a : b;
      expect(codes(await gql(target, LoginDocument, { login: user.login, password: `bad-password-${i}` }))).toEqual([
        'INVALID_CREDENTIALS',
      ]);
    }
    expect(codes(await gql(a, LoginDocument, { login: user.login, password: user.password }))).toEqual(['RATE_LIMITED']);
    expect(codes(await gql(b, LoginDocument, { login: user.login, password: user.password }))).toEqual(['RATE_LIMITED']);
    // Other logins are unaffected.
    expect(codes(await gql(b, LoginDocument, { login: uniqueLogin('other'), password: 'whatever1' }))).toEqual([
      'INVALID_CREDENTIALS',
    ]);
  });
});
