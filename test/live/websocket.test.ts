// Live feeds over graphql-ws against a running app.
import { describe, expect, it, beforeAll } from 'vitest';
import type { App } from '../../src/app.js';
import { WS_CLOSE } from '../../src/server/live/websocket.js';
import type { FormattedExecutionResult } from 'graphql';
import { LogoutDocument, MeDocument, ProfileUpdatedDocument, UpdateProfileDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { gql, gqlOk } from '../testkit/http.js';
import { signUp } from '../testkit/data/users.js';
import { eventually } from '../testkit/poll.js';
import { subscribe, wsClient, wsRequest, type WsClient } from '../testkit/ws.js';
import { profileChannel } from '../../src/resolvers/accounts/accounts.js';
import { sseSubscribe } from '../testkit/sse.js';

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
    expect(closed.reason).toMatch(/^Unauthorized: Invalid token/);
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
    const stream = await sseSubscribe(
      app,
      'subscription($login: String!) { profileUpdated(login: $login) { login bio } }',
      { login: user.login },
      user.token,
    );
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/text\/event-stream/);
    await eventually(() => app.services.pubsub.listeners(profileChannel(user.login)) === 1, { what: 'SSE live' });
    await gqlOk(app, UpdateProfileDocument, { input: { bio: 'via SSE' } }, user.token);
    expect(await stream.next()).toEqual({ data: { profileUpdated: { login: user.login, bio: 'via SSE' } } });
    stream.close();
  });
});

describe('token expiry on an open socket', () => {
  it.each([
    ['development', {}],
    ['production', { NODE_ENV: 'production' }],
  ])('closes the socket with 4419 (refresh and reconnect) when its token expires (%s)', async (_mode, env) => {
    // Long enough for sign-up, connect and one query on a loaded machine; the close is awaited, not timed.
    const shortLived = await startApp({ env: { JWT_TTL_SECONDS: '6', ...env } });
    const user = await signUp(shortLived);
    const client = wsClient(shortLived, user.token);
    expect((await wsRequest(client, MeDocument)).data?.me?.login).toBe(user.login);
    const closed = await client.closed;
    expect(closed.code).toBe(WS_CLOSE.TOKEN_EXPIRED);
    expect(closed.reason).toMatch(/expired/);

    // The same token, now expired, is told apart from an invalid one at connect time too.
    const again = wsClient(shortLived, user.token);
    expect(await again.closed).toMatchObject({ code: WS_CLOSE.TOKEN_EXPIRED });
    // Past the verifier's clock tolerance, HTTP says why too.
    const refused = await eventually(
      async () => {
        const res = await gql(shortLived, '{ me { login } }', {}, user.token);
        return res.errors ? res : undefined;
      },
      { what: 'the expired token to be refused over HTTP', timeoutMs: 15_000 },
    );
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'TOKEN_EXPIRED' });
  });
});

describe("an operation's own headers (GraphiQL's Headers editor)", () => {
  /** Runs one operation on `client` with `headers` in its extensions, as Yoga's GraphiQL sends them. */
  function withHeaders(client: WsClient, query: string, headers: Record<string, string>) {
    return new Promise<FormattedExecutionResult<Record<string, unknown>, unknown>>((resolve, reject) => {
      let result: FormattedExecutionResult<Record<string, unknown>, unknown> | undefined;
      client.subscribe(
        { query, extensions: { headers } },
        {
          next: (value) => (result = value),
          error: (err) => (Array.isArray(err) ? resolve({ errors: err }) : reject(err)),
          complete: () => resolve(result!),
        },
      );
    });
  }

  it('authenticates a query and a subscription on an anonymous socket', async () => {
    const user = await signUp(app);
    const client = wsClient(app);
    const me = await withHeaders(client, '{ me { login } }', { Authorization: `Bearer ${user.token}` });
    expect(me.data).toEqual({ me: { login: user.login } });

    const query = `subscription { profileUpdated(login: "${user.login}") { bio } }`;
    const events: FormattedExecutionResult<Record<string, unknown>, unknown>[] = [];
    client.subscribe({ query, extensions: { headers: { authorization: `Bearer ${user.token}` } } }, {
      next: (value) => void events.push(value),
      error: () => {},
      complete: () => {},
    });
    await eventually(() => app.services.pubsub.listeners(profileChannel(user.login)) === 1, { what: 'subscription live' });
    await gqlOk(app, UpdateProfileDocument, { input: { bio: 'from the headers' } }, user.token);
    await eventually(() => events.length === 1, { what: 'event delivered' });
    expect(events[0]).toEqual({ data: { profileUpdated: { bio: 'from the headers' } } });

    // The connection itself stays anonymous: an operation without the header is not the user's.
    expect((await wsRequest(client, MeDocument)).data?.me).toBeNull();
    await client.dispose();
  });

  it('closes the socket with 4401 for an invalid token in the headers', async () => {
    const client = wsClient(app);
    const answer = withHeaders(client, '{ me { login } }', { Authorization: 'Bearer not-a-token' });
    // The operation is told why before the socket closes, so GraphiQL can show it.
    expect((await answer).errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'TOKEN_INVALID' });
    expect(await client.closed).toMatchObject({ code: WS_CLOSE.UNAUTHORIZED });
  });

  it('closes the socket with 4401 once the header token is logged out', async () => {
    const user = await signUp(app);
    const client = wsClient(app);
    const headers = { Authorization: `Bearer ${user.token}` };
    expect((await withHeaders(client, '{ me { login } }', headers)).data).toEqual({ me: { login: user.login } });
    await gqlOk(app, LogoutDocument, {}, user.token);
    const closed = await client.closed;
    expect(closed.code).toBe(WS_CLOSE.UNAUTHORIZED);
    expect(closed.reason).toMatch(/revoked/);
  });
});
