/** Abuse and failure paths a production API must survive: each from a review finding. */
import { describe, expect, it, beforeAll } from 'vitest';
import type { App } from '../../src/app.js';
import { LoginDocument, LogoutDocument, ProfileUpdatedDocument, RegisterDocument, UpdateProfileDocument, UserByLoginDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { stringParamsSentDuring } from '../testkit/faults/cql-spy.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { signUp, uniqueLogin } from '../testkit/data/users.js';
import { eventually } from '../testkit/poll.js';
import { subscribe, wsClient } from '../testkit/ws.js';
import { profileChannel } from '../../src/resolvers/accounts/accounts.js';
import { MAX_OPERATIONS_PER_SOCKET } from '../../src/server/live/websocket.js';
import { sseSubscribe } from '../testkit/sse.js';

let app: App;
beforeAll(async () => {
  app = await startApp();
});

describe('rate limits under parallel attempts', () => {
  it('lets exactly the allowed number of 30 parallel wrong passwords be checked', async () => {
    // Its own instance: the 30 attempts also use up this address's allowance.
    const own = await startApp();
    const user = await signUp(own);
    const limit = own.services.config.auth.loginFailuresPerLogin;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => gql(own, LoginDocument, { login: user.login, password: `guess-number-${i}` })),
    );
    const all = results.map((r) => codes(r)[0]);
    expect(all.filter((c) => c === 'INVALID_CREDENTIALS')).toHaveLength(limit);
    expect(all.filter((c) => c === 'RATE_LIMITED')).toHaveLength(30 - limit);
  });

  it('lets exactly the allowed number through when 30 parallel guesses are split over two instances sharing Redis', async () => {
    // The Redis limiter counts for every instance: guesses spread over two count against one allowance.
    const [one, two] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
    const user = await signUp(one);
    const limit = one.services.config.auth.loginFailuresPerLogin;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => gql(i % 2 ? one : two, LoginDocument, { login: user.login, password: `guess-number-${i}` })),
    );
    const all = results.map((r) => codes(r)[0]);
    expect(all.filter((c) => c === 'INVALID_CREDENTIALS')).toHaveLength(limit);
    expect(all.filter((c) => c === 'RATE_LIMITED')).toHaveLength(30 - limit);
  });

  it('limits sign-ups per address', async () => {
    const limited = await startApp({ env: { REGISTRATIONS_PER_ADDRESS_PER_HOUR: '2', TRUST_PROXY: '1' } });
    const headers = { 'x-forwarded-for': '198.51.100.9' };
    const input = () => ({ login: uniqueLogin('su'), password: 'password123', firstname: 'S', lastname: 'U', email: 's@u.example' });
    for (let i = 0; i < 2; i++) expect(codes(await gql(limited, RegisterDocument, { input: input() }, undefined, headers))).toEqual([]);
    const third = await gql(limited, RegisterDocument, { input: input() }, undefined, headers);
    expect(codes(third)).toEqual(['RATE_LIMITED']);
    expect(third.errors?.[0]?.extensions?.reason).toBe('SIGN_UPS');
  });

  it('takes the client address from the rightmost X-Forwarded-For entry (the one our proxy added)', async () => {
    const limited = await startApp({ env: { LOGIN_FAILURES_PER_ADDRESS: '2', TRUST_PROXY: '1' } });
    const attempt = (spoofed: string) =>
      gql(limited, LoginDocument, { login: uniqueLogin('xff'), password: 'password1' }, undefined, {
        'x-forwarded-for': `${spoofed}, 192.0.2.50`,
      });
    expect(codes(await attempt('10.0.0.1'))).toEqual(['INVALID_CREDENTIALS']);
    expect(codes(await attempt('10.0.0.2'))).toEqual(['INVALID_CREDENTIALS']);
    // Rotating the client-controlled part does not reset the count.
    expect(codes(await attempt('10.0.0.3'))).toEqual(['RATE_LIMITED']);
  });
});

describe('logs', () => {
  it('never carry a password a client sent, even in an invalid request', async () => {
    const logs: string[] = [];
    const logged = await startApp({ logs, env: { LOG_LEVEL: 'debug' } });
    const secret = 'hunter2-SECRET-in-a-variable';
    // A missing field makes graphql-js quote the whole input, password included, in its error.
    const bad = await gql(logged, RegisterDocument, {
      input: { login: uniqueLogin('log'), password: secret, firstname: 'L', email: 'l@o.g' } as never,
    });
    expect(codes(bad)).toEqual(['BAD_USER_INPUT']);
    expect(bad.errors?.[0]?.extensions?.field).toBe('input.lastname');
    await gql(logged, LoginDocument, { login: uniqueLogin('log'), password: secret });
    await gql(logged, `mutation { login(login: "x", password: "${secret}") { token } x }`);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.join('\n')).not.toContain(secret);
  });
});

describe('bad requests get stable codes, never an internal error', () => {
  it('codes syntax, validation and variable errors', async () => {
    const syntax = await gql(app, '{ me { login ');
    expect(codes(syntax)).toEqual(['GRAPHQL_PARSE_FAILED']);
    const unknown = await gql(app, '{ me { nope } }');
    expect(codes(unknown)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    const user = await signUp(app);
    const wrongType = await gql(app, UserByLoginDocument, { login: 5 as unknown as string }, user.token);
    expect(codes(wrongType)).toEqual(['BAD_USER_INPUT']);
    expect(wrongType.errors?.[0]?.message).toMatch(/Variable "\$login"/);
    expect(wrongType.errors?.[0]?.extensions?.field).toBe('login');
  });

  it('refuses DateTime values that are not strict ISO 8601 instants, naming the field', async () => {
    const user = await signUp(app);
    const createItem = 'mutation($input: CreateItemInput!) { createItem(input: $input) { startDate } }';
    const input = (startDate: string) => ({
      name: 'Clock',
      unitPrice: '19.99',
      offeredUnits: 1,
      startDate,
      endDate: '2099-01-01T00:00:00Z',
    });
    for (const value of ['1', '2099-02-30T00:00:00Z', '12/31/2026', '2026-11-22T10:00:00', '2026-11-22T25:00:00Z']) {
      const res = await gql(app, createItem, { input: input(value) }, user.token);
      expect(codes(res), value).toEqual(['BAD_USER_INPUT']);
      expect(res.errors?.[0]?.extensions?.field, value).toBe('input.startDate');
    }
    const ok = await gql(app, createItem, { input: input('2026-11-22T10:00:00.5+01:00') }, user.token);
    expect(codes(ok)).toEqual([]);
    expect((ok.data as { createItem: { startDate: string } }).createItem.startDate).toBe('2026-11-22T09:00:00.500Z');
  });

  it('refuses text that is not well-formed Unicode instead of storing something else', async () => {
    const res = await gql(app, RegisterDocument, {
      input: { login: uniqueLogin('u'), password: 'password123', firstname: 'Bad\ud800', lastname: 'X', email: 'u@x.example' },
    });
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
    expect(res.errors?.[0]?.extensions?.field).toBe('input.firstname');
  });

  it('answers lookups of impossible logins without reaching Cassandra', async () => {
    const user = await signUp(app);
    const impossible = ['', ' ', 'x'.repeat(70_000), 'Robert\'); DROP TABLE users;--'];
    const sent = await stringParamsSentDuring(app, async () => {
      for (const login of impossible) {
        const res = await gql(app, UserByLoginDocument, { login }, user.token);
        expect(res.errors).toBeUndefined();
        expect(res.data?.user).toBeNull();
      }
    });
    expect(sent.filter((p) => impossible.includes(p))).toEqual([]);
  });

  it('refuses a request body over 1 MiB with 413 before parsing it', async () => {
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(2 * 1024 * 1024) } }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe('REQUEST_ENTITY_TOO_LARGE');
    // The server is still fine.
    expect((await gql(app, '{ __typename }')).data).toEqual({ __typename: 'Query' });
  });

  it('counts a chunked body (no Content-Length) as it streams and refuses it past 1 MiB', async () => {
    const chunk = new TextEncoder().encode(`{"query":"{ __typename }","variables":{"pad":"${'x'.repeat(64 * 1024)}`);
    const filler = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // 2 MiB in all, never closed properly as JSON: the limit must refuse it before any parse.
        if (sent >= 2 * 1024 * 1024) return controller.close();
        controller.enqueue(sent === 0 ? chunk : filler);
        sent += sent === 0 ? chunk.byteLength : filler.byteLength;
      },
    });
    const res = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe('REQUEST_ENTITY_TOO_LARGE');
    // A chunked body under the limit is served.
    const small = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"query":"{ __typename }"}'));
        controller.close();
      },
    });
    const ok = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: small, duplex: 'half' } as RequestInit);
    expect(await ok.json()).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('subscriptions end with their session', () => {
  it('releases the listener when a client unsubscribes before any event', async () => {
    const user = await signUp(app);
    const channel = profileChannel(user.login);
    const client = wsClient(app, user.token);
    for (let i = 0; i < 20; i++) {
      const sub = subscribe(client, ProfileUpdatedDocument, { login: user.login });
      await eventually(() => app.services.pubsub.listeners(channel) > 0, { what: 'listener' });
      sub.unsubscribe();
    }
    await eventually(() => app.services.pubsub.listeners(channel) === 0, { what: 'every listener released' });
    await client.dispose();
  });

  it('caps the operations one WebSocket may run at once', async () => {
    const user = await signUp(app);
    const client = wsClient(app, user.token);
    const subs = Array.from({ length: MAX_OPERATIONS_PER_SOCKET }, () =>
      subscribe(client, ProfileUpdatedDocument, { login: user.login }),
    );
    const channel = profileChannel(user.login);
    await eventually(() => app.services.pubsub.listeners(channel) === MAX_OPERATIONS_PER_SOCKET, { what: 'all listening' });
    const extra = subscribe(client, ProfileUpdatedDocument, { login: user.login });
    expect((await extra.next()).errors?.[0]?.extensions?.code).toBe('TOO_MANY_SUBSCRIPTIONS');
    // Ending one makes room again.
    subs[0]!.unsubscribe();
    await eventually(() => app.services.pubsub.listeners(channel) === MAX_OPERATIONS_PER_SOCKET - 1, { what: 'one released' });
    subscribe(client, ProfileUpdatedDocument, { login: user.login });
    await eventually(() => app.services.pubsub.listeners(channel) === MAX_OPERATIONS_PER_SOCKET, { what: 'room again' });
    await client.dispose();
    await eventually(() => app.services.pubsub.listeners(channel) === 0, { what: 'all released on close' });
  });

  it('ends an SSE stream once its token is logged out', async () => {
    const user = await signUp(app);
    const { login } = await gqlOk(app, LoginDocument, { login: user.login, password: user.password });
    const stream = await sseSubscribe(app, 'subscription($login: String!) { profileUpdated(login: $login) { bio } }', { login: user.login }, login.token);
    await eventually(() => app.services.pubsub.listeners(profileChannel(user.login)) === 1, { what: 'SSE live' });
    await gqlOk(app, LogoutDocument, {}, login.token);
    // The next event is not delivered: the stream says why and ends.
    await gqlOk(app, UpdateProfileDocument, { input: { bio: 'secret after logout' } }, user.token);
    const text = await stream.rest(); // resolves only when the server ends the stream
    expect(text).not.toContain('secret after logout');
    expect(text).toContain('UNAUTHENTICATED');
    expect(app.services.pubsub.listeners(profileChannel(user.login))).toBe(0);
  });
});
