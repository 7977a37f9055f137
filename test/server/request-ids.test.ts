/**
 * Request ids and honest logs: every request has an id, returned to the
 * client and carried by every line logged while serving it; a client's
 * mistake is one info line with its code, an unexpected error one error line
 * with its stack.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { print } from 'graphql';
import { BuyItemDocument, MeDocument } from '../generated/graphql.js';
import { createItem } from '../testkit/data/marketplace.js';
import { startApp } from '../testkit/app.js';
import { gql } from '../testkit/http.js';
import { signUp } from '../testkit/data/users.js';
import { startAppBehindCassandraProxy } from '../testkit/faults/tcp-proxy.js';
import { wsClient, wsRequest } from '../testkit/ws.js';
import { eventually } from '../testkit/poll.js';
import { onceHook } from '../testkit/faults/fault-hooks.js';

interface LogLine {
  level: number;
  reqId?: string;
  code?: string;
  msg: string;
  err?: { stack?: string };
}

const INFO = 30;
const WARN = 40;
const ERROR = 50;

let app: App;
let logs: string[];
beforeAll(async () => {
  logs = [];
  app = await startApp({ logs });
});

const lines = (source = logs): LogLine[] => source.map((l) => JSON.parse(l) as LogLine);
/** What an operator reads at the default level (info) about one request. */
const visibleLinesOf = (requestId: string, source = logs) =>
  lines(source).filter((l) => l.reqId === requestId && l.level >= INFO);

async function post(body: string, headers: Record<string, string> = {}, target = app) {
  const res = await fetch(`${target.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { res, requestId: res.headers.get('x-request-id')!, body: (await res.json()) as { errors?: Array<{ extensions?: { code?: string } }> } };
}

describe('request ids', () => {
  it('gives every request a new id and returns it', async () => {
    const a = await post('{"query":"{ __typename }"}');
    const b = await post('{"query":"{ __typename }"}');
    expect(a.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.requestId).not.toBe(b.requestId);
  });

  it("ignores a client's x-request-id unless it comes through a trusted proxy", async () => {
    expect((await post('{"query":"{ __typename }"}', { 'x-request-id': 'client-chosen-1' })).requestId).not.toBe('client-chosen-1');

    const behindProxy = await startApp({ env: { TRUST_PROXY: 'true' } });
    const proxied = await post('{"query":"{ __typename }"}', { 'x-request-id': 'edge-4f2a.7' }, behindProxy);
    expect(proxied.requestId).toBe('edge-4f2a.7');
    // An id that could forge or flood a log line is replaced.
    const forged = await post('{"query":"{ __typename }"}', { 'x-request-id': 'a"b\\nlevel:50' }, behindProxy);
    expect(forged.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const huge = await post('{"query":"{ __typename }"}', { 'x-request-id': 'x'.repeat(500) }, behindProxy);
    expect(huge.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("a client's mistakes", () => {
  const mistakes: Array<[string, string, string]> = [
    ['a validation failure', '{"query":"{ noSuchField }"}', 'GRAPHQL_VALIDATION_FAILED'],
    ['a syntax error', '{"query":"{"}', 'GRAPHQL_PARSE_FAILED'],
    ['an unknown operation name', '{"query":"query A { __typename }","operationName":"B"}', 'GRAPHQL_VALIDATION_FAILED'],
    ['a body that is not JSON', 'not json', 'BAD_REQUEST'],
    ['variables of the wrong type', '{"query":"query($n: String!) { user(login: $n) { login } }","variables":{"n":5}}', 'BAD_USER_INPUT'],
  ];

  for (const [what, body, code] of mistakes) {
    it(`logs ${what} once, at info, with its request id and code`, async () => {
      const { requestId, body: answer } = await post(body);
      expect(answer.errors?.[0]?.extensions?.code).toBe(code);
      const visible = visibleLinesOf(requestId);
      expect(visible).toHaveLength(1);
      expect(visible[0]).toMatchObject({ level: INFO, code, msg: 'client error' });
      expect(lines().filter((l) => l.level >= ERROR)).toEqual([]);
    });
  }

  it('answers a GET whose variables are not JSON with 400 BAD_REQUEST, without quoting it', async () => {
    const res = await fetch(`${app.url}/graphql?query=%7B__typename%7D&variables=%7Bsecret`);
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(JSON.parse(text).errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(text).not.toContain('secret');
    expect(visibleLinesOf(res.headers.get('x-request-id')!)).toMatchObject([{ level: INFO, code: 'BAD_REQUEST' }]);
  });

  it('does not echo a malformed body back in the error', async () => {
    const { body } = await post('{"password": "hunter2"');
    expect(JSON.stringify(body)).not.toContain('hunter2');
  });

  it('logs each graphql-ws operation under an id of its own', async () => {
    const client = wsClient(app);
    const result = await wsRequest(client, MeDocument);
    expect(result.data?.me).toBeNull();
    const bad = await new Promise<unknown>((resolve) =>
      client.subscribe({ query: '{ noSuchField }' }, { next: () => {}, error: resolve, complete: () => resolve(null) }),
    );
    expect(bad).toMatchObject([{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]);
    const wsLines = lines().filter((l) => l.code === 'GRAPHQL_VALIDATION_FAILED' && /\.\d+$/.test(l.reqId ?? ''));
    expect(wsLines).toHaveLength(1);
    expect(wsLines[0]!.reqId).toMatch(/^[0-9a-f-]{36}\.2$/);
    await client.dispose();
  });
});

describe('an unexpected error', () => {
  it('is logged once, at error level, with its stack and request id', async () => {
    const [seller, buyer] = await Promise.all([signUp(app), signUp(app)]);
    const item = await createItem(app, seller);
    // A fault hook stands in for a bug: a plain Error thrown inside a use case.
    const hooks = app.services.marketplace.hooks;
    onceHook(hooks, 'beforeBind', () => {
      throw new Error('simulated bug in the purchase path');
    });
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${buyer.token}` },
      body: JSON.stringify({ query: print(BuyItemDocument), variables: { itemId: item.id, quantity: 1 } }),
    });
    const requestId = res.headers.get('x-request-id')!;
    const answer = (await res.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
    expect(answer.errors[0]!.extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect(JSON.stringify(answer)).not.toMatch(/simulated|at .*\.ts/);
    const visible = visibleLinesOf(requestId);
    expect(visible.filter((l) => l.level >= ERROR)).toHaveLength(1);
    expect(visible.find((l) => l.level >= ERROR)!.err?.stack).toMatch(/simulated bug in the purchase path\n\s+at /);
  });
});

describe('storage that does not answer', () => {
  it('is SERVICE_UNAVAILABLE with retryAfter, logged once as a warning, not as a bug', async () => {
    const ownLogs: string[] = [];
    const { app: fragile, proxy } = await startAppBehindCassandraProxy({ logs: ownLogs });
    const user = await signUp(fragile);
    await proxy.close();
    const res = await fetch(`${fragile.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ query: '{ me { login } }' }),
    });
    const requestId = res.headers.get('x-request-id')!;
    const answer = (await res.json()) as { errors: Array<{ extensions: Record<string, unknown> }> };
    expect(answer.errors[0]!.extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', service: 'storage', retryAfter: 2 });
    const visible = visibleLinesOf(requestId, ownLogs);
    expect(visible).toHaveLength(1);
    expect(visible[0]).toMatchObject({ level: WARN, code: 'SERVICE_UNAVAILABLE', msg: 'service unavailable' });
    await proxy.open();
    await eventually(async () => (await gql(fragile, MeDocument, {}, user.token)).data?.me?.login === user.login, {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: 'storage to answer again',
    });
  });
});
