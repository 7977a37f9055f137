/**
 * Redis stopped and started for real (a redis-server of the test's own),
 * under two instances that share it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { LoginDocument, LogoutDocument, MeDocument } from './generated/graphql.js';
import { startApp, stopApp } from './testkit/app.js';
import { codes, gql, gqlOk } from './testkit/http.js';
import { eventually } from './testkit/poll.js';
import { RedisServer } from './testkit/redis-server.js';
import { signUp } from './testkit/users.js';
import { wsClient, wsRequest } from './testkit/ws.js';
import { WS_CLOSE } from '../src/server/websocket.js';

let redis: RedisServer;
let a: App;
let b: App;
beforeAll(async () => {
  redis = await RedisServer.start();
  const env = { REDIS_URL: redis.url };
  [a, b] = await Promise.all([startApp({ redis: true, env }), startApp({ redis: true, env })]);
});
afterAll(async () => {
  await Promise.all([a, b].map((app) => stopApp(app)));
  await redis.stop();
});

const ready = async (app: App) => (await fetch(`${app.url}/ready`)).status;

describe('logout while Redis is down', () => {
  it('is refused on the other instance at once, over HTTP and WebSocket, and nobody else is locked out', async () => {
    const user = await signUp(a);
    const token = (await gqlOk(b, LoginDocument, { login: user.login, password: user.password })).login.token;
    expect((await gqlOk(b, MeDocument, {}, token)).me?.login).toBe(user.login);
    const openSocket = wsClient(b, token);
    expect((await wsRequest(openSocket, MeDocument)).data?.me?.login).toBe(user.login);

    await redis.stop();
    await eventually(async () => (await ready(a)) === 503 && (await ready(b)) === 503, { what: 'both instances to see Redis down' });

    expect((await gqlOk(a, LogoutDocument, {}, token)).logout).toBe(true);
    // No waiting: B cannot have heard of it through Redis, and must not accept the token.
    // The socket opened before the logout is closed at its next operation...
    void wsRequest(openSocket, MeDocument).catch(() => undefined);
    expect((await openSocket.closed).code).toBe(WS_CLOSE.UNAUTHORIZED);
    // ...and so are new requests and sockets.
    expect(codes(await gql(b, MeDocument, {}, token))).toEqual(['UNAUTHENTICATED']);
    const fresh = wsClient(b, token);
    expect((await fresh.closed).code).toBe(WS_CLOSE.UNAUTHORIZED);
    // The user's other session still works: a check against storage, not a blanket refusal.
    expect((await gqlOk(b, MeDocument, {}, user.token)).me?.login).toBe(user.login);

    await redis.start();
    await eventually(async () => (await ready(a)) === 200 && (await ready(b)) === 200, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'both instances ready again',
    });
    expect(codes(await gql(b, MeDocument, {}, token))).toEqual(['UNAUTHENTICATED']);
    expect((await gqlOk(b, MeDocument, {}, user.token)).me?.login).toBe(user.login);
  });
});
