/**
 * The JSON fast path (src/server/http/json-fast-path.ts) answers exactly as Yoga
 * does. Every request below goes, byte for byte the same, to an instance with
 * the fast path and to one without it (HTTP_FAST_PATH=off), three times: the
 * third run of an operation Yoga has run and compiled is a prepared one, run
 * by the fast path without Yoga's pipeline. The status, the headers a client
 * reads and the body must be the same each time, and the third request must
 * have been served by the path the rules say (the fast path logs each request
 * it serves at trace level, under the request's id, and says which way).
 */
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { LoginDocument, MeDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { roomWith } from '../testkit/data/rooms.js';
import { createItem } from '../testkit/data/marketplace.js';
import { hookUntilRemoved } from '../testkit/faults/fault-hooks.js';
import { signUp, uniqueLogin, type TestUser } from '../testkit/data/users.js';
import { gql } from '../testkit/http.js';
import { scrape } from '../testkit/metrics.js';
import { eventually } from '../testkit/poll.js';
import { holdHashes } from '../testkit/faults/password-gate.js';

const MANIFEST = fileURLToPath(new URL('../generated/persisted-documents.json', import.meta.url));
const ME_ID = (MeDocument as unknown as { __meta__: { hash: string } }).__meta__.hash;
const SERVED_BY: Record<string, Case['path'] | 'shed'> = {
  'served by the JSON fast path': 'fast',
  'served as a prepared operation': 'prepared',
  'refused as its last run was (load shedding)': 'shed',
};
/** The headers a client acts on; Date and the request id differ by nature. */
const COMPARED_HEADERS = ['content-type', 'content-length', 'transfer-encoding', 'accept', 'allow', 'connection', 'access-control-allow-origin'];

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  requestId: string;
}

/** One HTTP request with exactly these headers (fetch would add its own Accept); a stream is cut after its head. */
function send(app: App, method: string, headers: Record<string, string>, body?: string | Buffer, path = '/graphql'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${app.url}${path}`, { method, headers }, (res) => {
      const streaming = String(res.headers['content-type']).startsWith('text/event-stream');
      const chunks: Buffer[] = [];
      const done = () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: streaming ? '' : Buffer.concat(chunks).toString(), requestId: String(res.headers['x-request-id']) });
      if (streaming) {
        done();
        res.destroy();
        return;
      }
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', done);
    });
    req.on('error', reject);
    if (body === undefined) req.end();
    else if (method === 'POST' && headers['transfer-encoding'] === 'chunked') {
      req.write(body);
      req.end();
    } else req.end(body);
  });
}

const json = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', ...extra });

let fast: App;
let plain: App;
const fastLogs: string[] = [];
let user: TestUser;
let room: string;

beforeAll(async () => {
  const env = { TRUSTED_DOCUMENTS_FILE: MANIFEST };
  [fast, plain] = await Promise.all([
    startApp({ env, logs: fastLogs, logLevel: 'trace' }),
    startApp({ env: { ...env, HTTP_FAST_PATH: 'off' } }),
  ]);
  user = await signUp(fast);
  room = await roomWith(fast, user, []);
});

/** Which path served a request, from the fast path's line about it (in `logs`); Yoga's when there is none. */
function servedBy(requestId: string, logs = fastLogs): Case['path'] | 'shed' {
  for (const line of logs) {
    const entry = JSON.parse(line) as { msg?: string; reqId?: string };
    if (entry.reqId === requestId && entry.msg !== undefined && entry.msg in SERVED_BY) return SERVED_BY[entry.msg]!;
  }
  return 'yoga';
}

interface Case {
  name: string;
  method?: string;
  headers: (token: string) => Record<string, string>;
  body?: () => string | Buffer;
  /**
   * Which path the rules send its third run to on the instance that has them:
   * prepared (an operation Yoga has validated and compiled), the fast path
   * through Yoga's pipeline, or Yoga.
   */
  path: 'prepared' | 'fast' | 'yoga';
}

const query = (q: string, extra: Record<string, unknown> = {}) => () => JSON.stringify({ query: q, ...extra });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const CASES: Case[] = [
  { name: 'a query with variables, no Accept', headers: (t) => json(bearer(t)), body: () => JSON.stringify({ query: 'query R($n: String!) { room(roomName: $n) { name participantCount } }', variables: { n: room } }), path: 'prepared' },
  { name: 'Accept: application/json', headers: (t) => json({ ...bearer(t), accept: 'application/json' }), body: query('{ me { login } }'), path: 'prepared' },
  { name: 'Accept: */*', headers: (t) => json({ ...bearer(t), accept: '*/*' }), body: query('{ me { login } }'), path: 'prepared' },
  { name: 'Accept: graphql-response+json, then json', headers: (t) => json({ ...bearer(t), accept: 'application/graphql-response+json, application/json;q=0.9' }), body: query('{ me { login } }'), path: 'prepared' },
  { name: 'a content type with its charset', headers: (t) => ({ ...bearer(t), 'content-type': 'application/json; charset=utf-8' }), body: query('{ me { login } }'), path: 'prepared' },
  { name: 'a mutation', headers: (t) => json(bearer(t)), body: query('mutation { updateProfile(input: { bio: "same on both" }) { login bio } }'), path: 'prepared' },
  { name: 'a refused input (BAD_USER_INPUT)', headers: (t) => json(bearer(t)), body: query('mutation { postMessage(roomName: "x", content: "hi") { id } }'), path: 'prepared' },
  { name: 'no token (UNAUTHENTICATED)', headers: () => json(), body: query('{ conversations(first: 5) { edges { node { id } } } }'), path: 'prepared' },
  { name: 'a bad token', headers: () => json(bearer('not.a.token')), body: query('{ me { login } }'), path: 'prepared' },
  { name: 'a validation error, graphql-response+json (400)', headers: () => json({ accept: 'application/graphql-response+json' }), body: query('{ nope }'), path: 'fast' },
  { name: 'a validation error, json (200)', headers: () => json({ accept: 'application/json' }), body: query('{ nope }'), path: 'fast' },
  { name: 'variables of the wrong type', headers: (t) => json(bearer(t)), body: () => JSON.stringify({ query: 'query R($n: String!) { room(roomName: $n) { name } }', variables: { n: 5 } }), path: 'fast' },
  { name: 'a named operation picked', headers: (t) => json(bearer(t)), body: query('query A { me { login } } query B { __typename }', { operationName: 'B' }), path: 'prepared' },
  { name: 'a trusted document by id', headers: (t) => json(bearer(t)), body: () => JSON.stringify({ documentId: ME_ID }), path: 'prepared' },
  { name: 'over the depth limit', headers: () => json(), body: query(`{ me { ${'chatRooms { participants { '.repeat(6)}login${' } }'.repeat(6)} } }`), path: 'fast' },
  { name: 'a syntax error', headers: () => json(), body: query('{ me { login '), path: 'yoga' },
  { name: 'an operation name nobody wrote', headers: () => json(), body: query('query A { __typename }', { operationName: 'Z' }), path: 'yoga' },
  { name: 'two operations and no name', headers: () => json(), body: query('query A { __typename } query B { __typename }'), path: 'yoga' },
  { name: 'an unknown trusted document', headers: () => json(), body: () => JSON.stringify({ documentId: 'sha256:00' }), path: 'yoga' },
  { name: 'an empty documentId beside a query', headers: (t) => json(bearer(t)), body: query('{ me { login } }', { documentId: '' }), path: 'yoga' },
  { name: 'invalid JSON', headers: () => json(), body: () => '{"query": ', path: 'yoga' },
  { name: 'a JSON array (a batch)', headers: () => json(), body: () => JSON.stringify([{ query: '{ __typename }' }]), path: 'yoga' },
  { name: 'an unknown parameter', headers: () => json(), body: query('{ __typename }', { foo: 1 }), path: 'yoga' },
  { name: 'variables that are not an object', headers: () => json(), body: query('{ __typename }', { variables: 'x' }), path: 'yoga' },
  { name: 'no query at all', headers: () => json(), body: () => JSON.stringify({ variables: {} }), path: 'yoga' },
  { name: 'a subscription, Accept: application/json (406)', headers: (t) => json({ ...bearer(t), accept: 'application/json' }), body: () => JSON.stringify({ query: `subscription { roomEvents(roomName: "${room}") { __typename } }` }), path: 'yoga' },
  { name: 'a subscription, no Accept (SSE)', headers: (t) => json(bearer(t)), body: () => JSON.stringify({ query: `subscription { roomEvents(roomName: "${room}") { __typename } }` }), path: 'yoga' },
  { name: 'a query asking for a stream', headers: () => json({ accept: 'text/event-stream' }), body: query('{ __typename }'), path: 'yoga' },
  { name: 'a page of another origin (CORS)', headers: () => json({ origin: 'http://localhost:5173' }), body: query('{ __typename }'), path: 'yoga' },
  { name: 'a chunked body', headers: () => json({ 'transfer-encoding': 'chunked' }), body: query('{ __typename }'), path: 'yoga' },
  { name: 'GraphQL over GET', method: 'GET', headers: () => ({}), path: 'yoga' },
  { name: 'a body over the limit (413)', headers: () => json(), body: () => Buffer.alloc(1024 * 1024 + 1, 0x20), path: 'yoga' },
];

describe('the JSON fast path', () => {
  it.each(CASES)('answers $name as Yoga does, the third time served by $path', async (c) => {
    const method = c.method ?? 'POST';
    const path = method === 'GET' ? '/graphql?query=%7B__typename%7D' : '/graphql';
    const body = c.body?.();
    let a: RawAnswer | undefined;
    for (let run = 1; run <= 3; run++) {
      const b = await send(plain, method, c.headers(user.token), body, path);
      a = await send(fast, method, c.headers(user.token), body, path);
      expect(a.status).toBe(b.status);
      for (const name of COMPARED_HEADERS) expect([run, name, a.headers[name]]).toEqual([run, name, b.headers[name]]);
      expect([run, a.body]).toEqual([run, b.body]);
      // Never on the instance without it.
      expect(servedBy(b.requestId)).toBe('yoga');
    }
    expect(servedBy(a!.requestId)).toBe(c.path);
  });

  it('masks an unexpected failure of a prepared operation as Yoga masks it', async () => {
    const seller = await signUp(fast);
    const item = await createItem(fast, seller);
    const body = JSON.stringify({ query: 'mutation Buy($id: ID!) { buyItem(itemId: $id, quantity: 1) { id } }', variables: { id: item.id } });
    for (const app of [fast, plain]) {
      hookUntilRemoved(app.services.marketplace.hooks, 'beforeBind', () => {
        throw new Error('a bug that names a secret');
      });
    }
    let a: RawAnswer | undefined;
    for (let run = 1; run <= 3; run++) {
      const b = await send(plain, 'POST', json(bearer(user.token)), body);
      a = await send(fast, 'POST', json(bearer(user.token)), body);
      expect([run, a.status, a.body]).toEqual([run, b.status, b.body]);
      expect(JSON.parse(a.body).errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(['INTERNAL_SERVER_ERROR']);
      expect(a.body).not.toContain('secret');
    }
    expect(servedBy(a!.requestId)).toBe('prepared');
  });

  it('runs a prepared operation only under the name it was prepared for', async () => {
    const text = 'query Solo { __typename }';
    const send3 = async (operationName: string | undefined) => {
      let a: RawAnswer | undefined;
      for (let run = 1; run <= 3; run++) {
        const body = JSON.stringify({ query: text, ...(operationName === undefined ? {} : { operationName }) });
        const b = await send(plain, 'POST', json(), body);
        a = await send(fast, 'POST', json(), body);
        expect([operationName, run, a.status, a.body]).toEqual([operationName, run, b.status, b.body]);
      }
      return a!;
    };
    expect(servedBy((await send3(undefined)).requestId)).toBe('prepared');
    // An empty name is a name no operation has: never the document's only operation.
    const unnamed = await send3('');
    expect(JSON.parse(unnamed.body)).toMatchObject({ errors: [{ message: expect.stringMatching(/operation/) }] });
    expect(JSON.parse(unnamed.body).data ?? null).toBeNull();
    expect(servedBy(unnamed.requestId)).toBe('yoga');
  });

  it('logs a refused token of a prepared operation once, as Yoga does', async () => {
    const body = JSON.stringify({ query: 'query Once { me { login } }' });
    // Run twice with a session, so it is compiled; then with a token nobody issued.
    for (let run = 1; run <= 2; run++) await send(fast, 'POST', json(bearer(user.token)), body);
    const a = await send(fast, 'POST', json(bearer('not.a.token')), body);
    expect(servedBy(a.requestId)).toBe('prepared');
    const lines = fastLogs.map((line) => JSON.parse(line) as { msg?: string; reqId?: string; code?: string });
    expect(lines.filter((l) => l.reqId === a.requestId && l.msg === 'client error')).toEqual([expect.objectContaining({ code: 'UNAUTHENTICATED' })]);
  });

  it('answers a prepared login, while every password hash slot is taken, as its last refused run was, without running it', async () => {
    // One hashing slot and one place in its queue, taken by two logins held there (and no wait limit ending the
    // queued one's) until every request below was answered.
    const logs: string[] = [];
    const env = { PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '1', PASSWORD_HASH_MAX_WAIT_MS: String(600_000), LOGIN_FAILURES_PER_ADDRESS: '1000', LOGIN_FAILURES_PER_LOGIN: '1000' };
    const gated = await startApp({ env, logs, logLevel: 'trace' });
    try {
      const owner = await signUp(gated);
      const before = await scrape(gated);
      const hashes = holdHashes(gated);
      const holders = [1, 2].map(() => gql(gated, LoginDocument, { login: owner.login, password: owner.password }));
      await eventually(() => hashes.held() === 1 && !gated.services.passwords.hasRoom(), { what: 'the hashing slot and queue place to be taken' });
      // One operation sent again and again with every kind of arguments: the right ones, a wrong password, an unknown
      // login, and a password too short to check (BAD_USER_INPUT when the hasher has room). Each is shed in turn.
      const probe = 'mutation Probe($l: String!, $p: String!) { login(login: $l, password: $p) { token } }';
      // Never shed: the same login with a token nobody issued (a run refuses the token first), and a login whose
      // selection takes a page size from a variable (a run checks the cost limit first).
      const deep = 'mutation Deep($l: String!, $p: String!, $n: Int) { login(login: $l, password: $p) { user { messages(first: $n) { edges { node { id } } } } } }';
      const variants = [
        { text: probe, variables: { l: owner.login, p: owner.password }, shed: true },
        { text: probe, variables: { l: owner.login, p: 'not-the-password' }, shed: true },
        { text: probe, variables: { l: uniqueLogin('ghost'), p: 'whatever-pass' }, shed: true },
        { text: probe, variables: { l: owner.login, p: '' }, shed: true },
        { text: probe, variables: { l: owner.login, p: owner.password }, token: 'not.a.token', shed: false, code: 'UNAUTHENTICATED' },
        { text: deep, variables: { l: owner.login, p: owner.password, n: 5 }, shed: false, code: 'RATE_LIMITED' },
        { text: deep, variables: { l: owner.login, p: owner.password, n: 6000 }, shed: false, code: 'QUERY_TOO_COMPLEX' },
      ];
      const answers: Array<{ variant: (typeof variants)[number]; path: string; answer: RawAnswer }> = [];
      const shedVariants = new Set<number>();
      const codeOf = (a: RawAnswer) => (JSON.parse(a.body) as { errors?: Array<{ extensions: { code: string } }> }).errors?.[0]?.extensions.code;
      // Each answer `later` came after one `earlier` did: what shedding would take for another's answer had been sent.
      const after = (earlier: (a: (typeof answers)[number]) => boolean, later: (a: (typeof answers)[number]) => boolean) => {
        const first = answers.findIndex(earlier);
        return first >= 0 && answers.slice(first + 1).some(later);
      };
      // The variants in turn, three rounds: the third run of each document is a prepared one, and from then on the
      // hasher, held full, refuses every run that gets to it.
      for (let round = 0; round < 3; round++) {
        for (const [i, variant] of variants.entries()) {
          const headers = json(variant.token ? bearer(variant.token) : {});
          const answer = await send(gated, 'POST', headers, JSON.stringify({ query: variant.text, variables: variant.variables }));
          const path = servedBy(answer.requestId, logs);
          answers.push({ variant, path, answer });
          if (path === 'shed') shedVariants.add(i);
        }
      }
      hashes.release();
      for (const held of await Promise.all(holders)) expect(held.errors).toBeUndefined();
      // The token sent after a shed answer; a page over the cost limit sent after a prepared run of the same
      // document was refused by the hasher (the refusal a shed answer would give).
      expect(after((a) => a.path === 'shed', (a) => a.variant === variants[4])).toBe(true);
      expect(after((a) => a.variant === variants[5] && a.path === 'prepared' && codeOf(a.answer) === 'RATE_LIMITED', (a) => a.variant === variants[6])).toBe(true);
      // Every sheddable variant was refused without running at least once (so with another's answer), no other ever.
      expect([...shedVariants].sort()).toEqual([0, 1, 2, 3]);
      const unshed = answers.filter((a) => !a.variant.shed);
      expect(unshed.filter((a) => a.path === 'shed').map((a) => a.variant)).toEqual([]);
      // As a run answers them: the token refused, the cost over the limit, the small page refused by the hasher.
      for (const { variant, answer } of unshed) {
        expect([variant.variables, codeOf(answer) ?? 'served']).toEqual([variant.variables, variant.code]);
      }
      const shed = answers.filter((a) => a.path === 'shed');
      const ran = answers.filter((a) => a.variant.text === probe && !a.variant.token && a.path !== 'shed' && codeOf(a.answer) === 'RATE_LIMITED');
      // The answer recorded came from a prepared run of the operation: one at least was refused by running it.
      const prepared = ran.filter((a) => a.path === 'prepared');
      expect(prepared.length).toBeGreaterThan(0);
      const first = prepared[0]!.answer;
      for (const { answer } of [...shed, ...prepared]) {
        expect([answer.status, answer.headers['content-type'], answer.body]).toEqual([first.status, first.headers['content-type'], first.body]);
      }
      // The runs before it said the same (an interpreted run, before the document is compiled, puts "errors" first).
      for (const { answer } of ran) {
        expect([answer.status, answer.headers['content-type'], JSON.parse(answer.body)]).toEqual([first.status, first.headers['content-type'], JSON.parse(first.body)]);
      }
      expect(JSON.parse(first.body)).toEqual({
        errors: [
          {
            message: 'Too many logins and sign-ups at once; retry in 1 s',
            locations: [{ line: 1, column: 44 }],
            path: ['login'],
            extensions: { code: 'RATE_LIMITED', reason: 'SERVER_BUSY', retryAfter: 1 },
          },
        ],
        data: null,
      });
      // Counted as a run's refusal is: every refusal, shed or not, once, and each Probe answered with an error (shed
      // or run, without a token: a token's refusal is the context's) as an error of its execution.
      const refusals = answers.filter((a) => codeOf(a.answer) === 'RATE_LIMITED').length;
      const scraped = await scrape(gated);
      const moved = (name: string, labels: Record<string, string>) => scraped.value(name, labels) - before.value(name, labels);
      expect(moved('parley_graphql_errors_total', { code: 'RATE_LIMITED', operation_type: 'mutation' })).toBe(refusals);
      const probeErrors = answers.filter((a) => a.variant.text === probe && !a.variant.token && codeOf(a.answer) !== undefined).length;
      expect(moved('graphql_envelop_error_result', { operationName: 'Probe', phase: 'execute' })).toBe(probeErrors);
      // With room again, the same operation runs: a login, and a password too short refused as such.
      const served = await send(gated, 'POST', json(), JSON.stringify({ query: probe, variables: variants[0]!.variables }));
      expect(servedBy(served.requestId, logs)).toBe('prepared');
      expect(JSON.parse(served.body).data.login.token.split('.')).toHaveLength(3);
      const tooShort = await send(gated, 'POST', json(), JSON.stringify({ query: probe, variables: variants[3]!.variables }));
      expect(codeOf(tooShort)).toBe('BAD_USER_INPUT');
    } finally {
      await gated.stop();
    }
  });
});
