import { describe, expect, it, beforeAll } from 'vitest';
import type { App } from '../src/app.js';
import { WS_CLOSE } from '../src/server/websocket.js';
import { MeDocument, ProfileUpdatedDocument, UpdateProfileDocument } from './generated/graphql.js';
import { startApp } from './testkit/app.js';
import { gqlOk } from './testkit/http.js';
import { signUp } from './testkit/users.js';
import { eventually } from './testkit/poll.js';
import { subscribe, wsClient, wsRequest } from './testkit/ws.js';
import { profileChannel } from '../src/resolvers/accounts.js';

let app: App;
beforeAll(async () => {
  app = await startApp();
});

describe('graphql-ws', () => {
  it('authenticates from connectionParams', async () => {
    const user = await signUp(app);
    const client = wsClient(app, user.token);
    expect((await wsRequest(client, MeDocument)).data?.me?.login).toBe(user.login);
    await client.dispose();
    const anonymous = wsClient(app);
    expect((await wsRequest(anonymous, MeDocument)).data?.me).toBeNull();
    await anonymous.dispose();
  });

  it('closes the socket with 4401 and a reason for an invalid token', async () => {
    const client = wsClient(app, 'eyJhbGciOiJIUzI1NiJ9.e30.invalid');
    const closed = await client.closed;
    expect(closed.code).toBe(WS_CLOSE.UNAUTHORIZED);
    expect(closed.reason).toMatch(/^Unauthorized: Invalid or expired token/);
  });

  it('refuses subscriptions that need a session when anonymous', async () => {
    const user = await signUp(app);
    const client = wsClient(app);
    const sub = subscribe(client, ProfileUpdatedDocument, { login: user.login });
    const first = await sub.next();
    expect(first.errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    await client.dispose();
  });

  it('delivers subscription events and stops listening after unsubscribe', async () => {
    const user = await signUp(app);
    const client = wsClient(app, user.token);
    const sub = subscribe(client, ProfileUpdatedDocument, { login: user.login });
    const channel = profileChannel(user.login);
    await eventually(() => app.services.pubsub.listeners(channel) === 1, { what: 'subscription live' });
    await gqlOk(app, UpdateProfileDocument, { input: { lastname: 'Renamed' } }, user.token);
    expect((await sub.next()).data?.profileUpdated.lastname).toBe('Renamed');
    sub.unsubscribe();
    await eventually(() => app.services.pubsub.listeners(channel) === 0, { what: 'listener released' });
    await client.dispose();
  });
});

describe('SSE', () => {
  it('streams subscription events over text/event-stream', async () => {
    const user = await signUp(app);
    const controller = new AbortController();
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${user.token}`,
      },
      body: JSON.stringify({
        query: 'subscription($login: String!) { profileUpdated(login: $login) { login bio } }',
        variables: { login: user.login },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    await eventually(() => app.services.pubsub.listeners(profileChannel(user.login)) === 1, { what: 'SSE live' });
    await gqlOk(app, UpdateProfileDocument, { input: { bio: 'via SSE' } }, user.token);

    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('via SSE')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const dataLine = text.split('\n').find((l) => l.startsWith('data:') && l.includes('profileUpdated'));
    expect(JSON.parse(dataLine!.slice(5))).toEqual({ data: { profileUpdated: { login: user.login, bio: 'via SSE' } } });
    controller.abort();
  });
});

describe('token expiry on an open socket', () => {
  it('closes the socket with 4401 when its token expires', async () => {
    // Long enough for sign-up, connect and one query on a loaded machine; the close is awaited, not timed.
    const shortLived = await startApp({ env: { JWT_TTL_SECONDS: '6' } });
    const user = await signUp(shortLived);
    const client = wsClient(shortLived, user.token);
    expect((await wsRequest(client, MeDocument)).data?.me?.login).toBe(user.login);
    const closed = await client.closed;
    expect(closed.code).toBe(WS_CLOSE.UNAUTHORIZED);
    expect(closed.reason).toMatch(/expired/);
  });
});
