/**
 * /metrics as Prometheus sees it: scraped before and after real traffic over
 * HTTP, SSE and graphql-ws, each series moving by what that traffic did; and
 * the settings that turn it off or put it behind a token.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'graphql';
import type { App } from '../../src/app.js';
import { BuyItemDocument, LoginDocument, MeDocument, RoomEventsDocument } from '../generated/graphql.js';
import { startApp, stopApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { createItem } from '../testkit/data/marketplace.js';
import { metricValue, scrape, type Scrape } from '../testkit/metrics.js';
import { eventually } from '../testkit/poll.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { signUp, uniqueLogin } from '../testkit/data/users.js';
import { subscribe, wsClient, wsRequest } from '../testkit/ws.js';
import { onceHook } from '../testkit/faults/fault-hooks.js';
import { recordCql } from '../testkit/faults/cql-spy.js';
import { sseSubscribe } from '../testkit/sse.js';

let app: App;
beforeAll(async () => {
  // A low per-login limit, so one test reaches RATE_LIMITED in three attempts.
  app = await startApp({ env: { LOGIN_FAILURES_PER_LOGIN: '2' } });
});

/** How much each series moved between two scrapes. */
const moved = (before: Scrape, after: Scrape) => (name: string, labels: Record<string, string> = {}) =>
  after.value(name, labels) - before.value(name, labels);

describe('GET /metrics', () => {
  it('serves the Prometheus text format, process metrics included, without running GraphQL', async () => {
    const first = await scrape(app);
    expect(first.has('process_cpu_user_seconds_total')).toBe(true);
    expect(first.has('nodejs_eventloop_lag_seconds')).toBe(true);
    const declared = {
      parley_graphql_errors_total: 'counter',
      parley_websockets_open: 'gauge',
      parley_subscriptions_active: 'gauge',
      parley_events_published_total: 'counter',
      parley_events_delivered_total: 'counter',
      parley_login_failures_total: 'counter',
      parley_rate_limited_total: 'counter',
      parley_purchases_recovered_total: 'counter',
      parley_cassandra_request_duration_seconds: 'histogram',
      parley_cassandra_request_errors_total: 'counter',
      graphql_envelop_request: 'counter',
      graphql_envelop_request_duration: 'histogram',
      graphql_envelop_error_result: 'counter',
      graphql_yoga_http_duration: 'histogram',
    };
    for (const [name, type] of Object.entries(declared)) expect([name, first.type(name)]).toEqual([name, type]);

    const second = await scrape(app);
    expect(second.value('graphql_envelop_request')).toBe(first.value('graphql_envelop_request'));
    expect(second.value('graphql_envelop_phase_parse_count')).toBe(first.value('graphql_envelop_phase_parse_count'));
    expect((await fetch(`${app.url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('counts operations by name and type, with their durations', async () => {
    const user = await signUp(app);
    const before = await scrape(app);
    for (let i = 0; i < 3; i++) await gqlOk(app, LoginDocument, { login: user.login, password: user.password });
    await gqlOk(app, MeDocument, {}, user.token);
    await gql(app, '{ __typename }');
    // A client picks the name: the label keeps its first 64 characters.
    await gql(app, `query ${'Q'.repeat(100)} { __typename }`);
    const after = await scrape(app);
    const delta = moved(before, after);

    const login = { operationName: 'Login', operationType: 'mutation' };
    expect(delta('graphql_envelop_request', login)).toBe(3);
    expect(delta('graphql_envelop_request_duration_count', login)).toBe(3);
    expect(delta('graphql_envelop_request_duration_sum', login)).toBeGreaterThan(0);
    expect(delta('graphql_envelop_phase_execute_count', login)).toBe(3);
    expect(delta('graphql_yoga_http_duration_count', { ...login, method: 'POST', statusCode: '200' })).toBe(3);
    expect(delta('graphql_envelop_request', { operationName: 'Me', operationType: 'query' })).toBe(1);
    expect(delta('graphql_envelop_request', { operationName: 'anonymous', operationType: 'query' })).toBe(1);
    expect(delta('graphql_envelop_request', { operationName: 'Q'.repeat(64), operationType: 'query' })).toBe(1);
    expect(after.matching('graphql_envelop_request').every((s) => s.labels.operationName!.length <= 64)).toBe(true);
  });

  it('counts errors by the code the client sees, over HTTP and WebSocket', async () => {
    const user = await signUp(app);
    const seller = await signUp(app);
    const item = await createItem(app, seller);
    const before = await scrape(app);

    // Twice each: the second time, Yoga answers from its parse and validation caches.
    for (let i = 0; i < 2; i++) {
      expect(codes(await gql(app, '{ nope }'))).toEqual(['GRAPHQL_VALIDATION_FAILED']);
      expect(codes(await gql(app, '{ me {'))).toEqual(['GRAPHQL_PARSE_FAILED']);
    }
    expect(codes(await gql(app, LoginDocument, { login: user.login, password: 'not the password' }))).toEqual(['INVALID_CREDENTIALS']);
    // Refused while building the context, before execution.
    expect(codes(await gql(app, MeDocument, {}, 'not-a-jwt'))).toEqual(['UNAUTHENTICATED']);
    // An unexpected failure is counted as what the client gets: the masked code.
    const hooks = app.services.marketplace.hooks;
    onceHook(hooks, 'beforeBind', () => {
      throw new Error('a bug');
    });
    expect(codes(await gql(app, BuyItemDocument, { itemId: item.id, quantity: 1 }, user.token))).toEqual(['INTERNAL_SERVER_ERROR']);
    const client = wsClient(app, user.token);
    const overWs = await wsRequest(client, parse('{ nope }'));
    expect(overWs.errors).toHaveLength(1);
    await client.dispose();

    const delta = moved(before, await scrape(app));
    const errors = 'parley_graphql_errors_total';
    expect(delta(errors, { code: 'GRAPHQL_VALIDATION_FAILED', operation_type: 'query' })).toBe(3);
    expect(delta(errors, { code: 'GRAPHQL_PARSE_FAILED', operation_type: 'unknown' })).toBe(2);
    expect(delta(errors, { code: 'INVALID_CREDENTIALS', operation_type: 'mutation' })).toBe(1);
    expect(delta(errors, { code: 'UNAUTHENTICATED', operation_type: 'query' })).toBe(1);
    expect(delta(errors, { code: 'INTERNAL_SERVER_ERROR', operation_type: 'mutation' })).toBe(1);
    expect(delta(errors)).toBe(8);
    expect(delta('graphql_envelop_error_result', { operationName: 'Login', phase: 'execute' })).toBe(1);
    expect(delta('graphql_envelop_error_result', { operationName: 'BuyItem', phase: 'execute' })).toBe(1);
  });

  it('counts a refused token on an operation run prepared as the pipeline counts it', async () => {
    const user = await signUp(app);
    const document = 'query MeAgain { me { login } }';
    // Through Yoga's pipeline twice (compiled on the second run): the fast path runs it prepared from then on.
    for (let i = 0; i < 2; i++) expect((await gql(app, document, {}, user.token)).data).toEqual({ me: { login: user.login } });
    const before = await scrape(app);
    for (let i = 0; i < 2; i++) expect(codes(await gql(app, document, {}, 'not-a-jwt'))).toEqual(['UNAUTHENTICATED']);
    const delta = moved(before, await scrape(app));
    expect(delta('parley_graphql_errors_total', { code: 'UNAUTHENTICATED', operation_type: 'query' })).toBe(2);
    expect(delta('graphql_envelop_error_result', { operationName: 'MeAgain', phase: 'context' })).toBe(2);
    expect(delta('graphql_envelop_request', { operationName: 'MeAgain' })).toBe(0);
    expect(delta('graphql_yoga_http_duration_count', { operationName: 'MeAgain', method: 'POST', statusCode: '200' })).toBe(2);
  });

  it('counts failed logins by reason, and refusals by the rate limit', async () => {
    const user = await signUp(app);
    const before = await scrape(app);
    expect(codes(await gql(app, LoginDocument, { login: uniqueLogin('ghost'), password: 'whatever1' }))).toEqual(['INVALID_CREDENTIALS']);
    for (const password of ['wrong one', 'wrong two']) {
      expect(codes(await gql(app, LoginDocument, { login: user.login, password }))).toEqual(['INVALID_CREDENTIALS']);
    }
    // The third attempt on this login is over LOGIN_FAILURES_PER_LOGIN=2, even with the right password.
    expect(codes(await gql(app, LoginDocument, { login: user.login, password: user.password }))).toEqual(['RATE_LIMITED']);

    const delta = moved(before, await scrape(app));
    expect(delta('parley_login_failures_total', { reason: 'unknown_login' })).toBe(1);
    expect(delta('parley_login_failures_total', { reason: 'wrong_password' })).toBe(2);
    expect(delta('parley_rate_limited_total', { action: 'login' })).toBe(1);
    expect(delta('parley_rate_limited_total', { action: 'register' })).toBe(0);
  });

  it('follows WebSockets, subscriptions and the events published and delivered to them', async () => {
    const alice = await signUp(app);
    const name = await roomWith(app, alice);
    // Sockets of earlier tests close asynchronously.
    await eventually(async () => (await metricValue(app, 'parley_websockets_open')) === 0, { what: 'no socket open' });
    const before = await scrape(app);
    expect(before.value('parley_subscriptions_active', { transport: 'ws' })).toBe(0);

    const client = wsClient(app, alice.token);
    const sub = subscribe(client, RoomEventsDocument, { roomName: name });
    await eventually(async () => (await metricValue(app, 'parley_subscriptions_active', { transport: 'ws' })) === 1, {
      what: 'the subscription to count as active',
    });
    expect(await metricValue(app, 'parley_websockets_open')).toBe(1);

    await post(app, alice, name, 'hello, metrics');
    expect((await sub.next()).data?.roomEvents.__typename).toBe('MessagePosted');
    const delta = moved(before, await scrape(app));
    expect(delta('parley_events_published_total', { channel_kind: 'room' })).toBe(1);
    expect(delta('parley_events_delivered_total', { channel_kind: 'room' })).toBe(1);

    await client.dispose();
    const gone = await eventually(
      async () => {
        const now = await scrape(app);
        const closed = now.value('parley_websockets_open') === 0 && now.value('parley_subscriptions_active', { transport: 'ws' }) === 0;
        return closed ? now : undefined;
      },
      { what: 'the socket and its subscription to be counted as gone' },
    );
    // The plugin counts and times a subscription when it ends.
    const subscription = { operationName: 'RoomEvents', operationType: 'subscription' };
    expect(moved(before, gone)('graphql_envelop_request', subscription)).toBe(1);
    expect(moved(before, gone)('graphql_envelop_request_duration_count', subscription)).toBe(1);
  });

  it('counts a subscription over SSE until its client goes away', async () => {
    const bob = await signUp(app);
    const name = await roomWith(app, bob);
    const stream = await sseSubscribe(app, RoomEventsDocument, { roomName: name }, bob.token);
    expect(stream.status).toBe(200);
    await eventually(async () => (await metricValue(app, 'parley_subscriptions_active', { transport: 'http' })) === 1, {
      what: 'the SSE subscription to count as active',
    });
    stream.close();
    await eventually(async () => (await metricValue(app, 'parley_subscriptions_active', { transport: 'http' })) === 0, {
      what: 'the SSE subscription to count as gone',
    });
  });

  it('times Cassandra requests as the driver sees them and counts their errors by class', async () => {
    const user = await signUp(app);
    // Background jobs (purchase recovery, room cleanups) query on their own schedule. The numbers are read over
    // a window in which the instance sent nothing but what the test sent: nothing unanswered when it opens, and
    // no statement in it but the one read of `me`.
    const { delta, sent } = await eventually(
      async () => {
        const spy = recordCql(app);
        try {
          const driver = app.services.db.client.getState();
          if (driver.getConnectedHosts().some((host) => driver.getInFlightQueries(host) > 0)) return undefined;
          const before = await scrape(app);
          await gqlOk(app, MeDocument, {}, user.token);
          // A request Cassandra refuses (through the API that would be a bug, so it is sent directly), unprepared:
          // the driver tracks executions, and a statement that cannot be prepared is never executed.
          await expect(app.services.db.client.execute('SELECT * FROM no_such_table', [], { prepare: false })).rejects.toThrow(
            /no_such_table/,
          );
          const after = await scrape(app);
          const statements = spy.statements();
          return statements.every((cql) => /\bFROM users\b/.test(cql)) ? { delta: moved(before, after), sent: statements } : undefined;
        } finally {
          spy.stop();
        }
      },
      { what: 'a window with no background request' },
    );

    // `me` reads its user once.
    expect(sent).toEqual([expect.stringMatching(/^SELECT .* FROM users WHERE login IN \?$/)]);
    expect(delta('parley_cassandra_request_duration_seconds_count', { kind: 'query', outcome: 'success' })).toBe(1);
    expect(delta('parley_cassandra_request_duration_seconds_count', { kind: 'batch' })).toBe(0);
    expect(delta('parley_cassandra_request_duration_seconds_sum', { kind: 'query', outcome: 'success' })).toBeGreaterThan(0);
    expect(delta('parley_cassandra_request_duration_seconds_count', { outcome: 'error' })).toBe(1);
    expect(delta('parley_cassandra_request_errors_total', { error: 'ResponseError' })).toBe(1);
    // Labels name error classes, never the CQL.
    expect((await scrape(app)).text).not.toMatch(/no_such_table|SELECT/);
  });

  it("keeps each instance's numbers apart", async () => {
    const other = await startApp();
    const failures = (s: Scrape) => s.value('parley_login_failures_total');
    const otherBefore = failures(await scrape(other));
    const before = failures(await scrape(app));
    await gql(app, LoginDocument, { login: uniqueLogin('ghost'), password: 'whatever1' });
    expect(failures(await scrape(app))).toBe(before + 1);
    expect(failures(await scrape(other))).toBe(otherBefore);
    await stopApp(other);
  });
});

describe('METRICS and METRICS_TOKEN', () => {
  it('are off in production unless configured, and wherever METRICS=off: /metrics is then unknown', async () => {
    const production = await startApp({ env: { NODE_ENV: 'production' } });
    expect((await fetch(`${production.url}/metrics`)).status).toBe(404);
    await stopApp(production);
    const off = await startApp({ env: { METRICS: 'off' } });
    expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
    await stopApp(off);
  });

  it('refuses to start in production with METRICS=on and no METRICS_TOKEN', async () => {
    await expect(startApp({ env: { NODE_ENV: 'production', METRICS: 'on' } })).rejects.toThrow(/METRICS_TOKEN/);
  });

  it('asks for the token when METRICS_TOKEN is set', async () => {
    const token = 'scrape-token-0123456789abcdef';
    const guarded = await startApp({ env: { NODE_ENV: 'production', METRICS: 'on', METRICS_TOKEN: token } });
    const anonymous = await fetch(`${guarded.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await anonymous.text()).not.toMatch(/parley_/);
    for (const authorization of ['Bearer wrong-token', token, `Basic ${token}`]) {
      expect((await fetch(`${guarded.url}/metrics`, { headers: { authorization } })).status).toBe(401);
    }
    expect((await scrape(guarded, token)).type('parley_websockets_open')).toBe('gauge');
    await stopApp(guarded);
  });
});
