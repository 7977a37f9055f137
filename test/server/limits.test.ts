/** Operation limits: depth, aliases, tokens and cost, on HTTP and WebSocket alike. */
import { describe, expect, it, beforeAll } from 'vitest';
import { parse } from 'graphql';
import type { App } from '../../src/app.js';
import { startApp } from '../testkit/app.js';
import { codes, gql } from '../testkit/http.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { wsClient, wsRequest } from '../testkit/ws.js';

let app: App;
let costApp: App;
let user: TestUser;
beforeAll(async () => {
  // Sign up on a default instance: the limited one would refuse the sign-up document itself.
  user = await signUp(await startApp());
  app = await startApp({ env: { MAX_DEPTH: '4', MAX_ALIASES: '3', MAX_TOKENS: '200' } });
  costApp = await startApp({ env: { MAX_COST: '6' } });
});

const manyAliases = '{ a: me { login } b: me { login } c: me { login } d: me { login } }';
// Cost follows work: scalars 0, objects 1, a page its size times each item's cost.
// 1 (conversations) + 2 × (1 node + 1 partner + 1 lastMessage) = 7 > 6.
const costly = '{ conversations(first: 2) { edges { node { partner { login } lastMessage { content } } } } }';
const affordable = '{ conversations(first: 1) { edges { node { partner { login } lastMessage { content } } } } }';
// Nested pages multiply: 1 + 1 × (1 node + 1 messages + 50 × 1 node) = 53.
const nested = '{ conversations(first: 1) { edges { node { messages(first: 50) { edges { node { content } } } } } } }';
const cheap = '{ me { login } }';

async function viaWs(query: string, target = app) {
  const client = wsClient(target, user.token);
  const result = await wsRequest(client, parse(query));
  await client.dispose();
  return result;
}

describe('operation limits', () => {
  it('accepts an operation inside every limit', async () => {
    expect((await gql(app, cheap, {}, user.token)).data).toEqual({ me: { login: user.login } });
    expect((await viaWs(cheap)).data).toEqual({ me: { login: user.login } });
  });

  it('refuses an operation over the cost limit, over HTTP and WebSocket', async () => {
    // Refused by the root field before it runs: the whole operation answers null (the field is non-null).
    // Over WebSocket the document goes out printed, the field on its second line.
    const refusal = (complexity: number, line = 1) => ({
      data: null,
      errors: [
        {
          message: `Operation complexity ${complexity} exceeds the limit of 6`,
          locations: [{ line, column: 3 }],
          path: ['conversations'],
          extensions: { code: 'QUERY_TOO_COMPLEX', limit: 'complexity' },
        },
      ],
    });
    expect(await gql(costApp, costly, {}, user.token)).toEqual({ status: 200, ...refusal(7) });
    expect((await gql(costApp, affordable, {}, user.token)).errors).toBeUndefined();
    expect(await gql(costApp, nested, {}, user.token)).toEqual({ status: 200, ...refusal(53) });
    expect(await viaWs(costly, costApp)).toEqual(refusal(7, 2));
  });

  it('refuses an operation over the depth limit, over HTTP and WebSocket', async () => {
    // The accounts schema is shallow; graphql-armor counts fragment spreads as levels, so nest those.
    const deeper = '{ me { ...A } } fragment A on User { ...B } fragment B on User { ...C } fragment C on User { ...D } fragment D on User { ...E } fragment E on User { login }';
    const http = await gql(app, deeper, {}, user.token);
    const ws = await viaWs(deeper);
    for (const res of [http, ws]) {
      const list = 'errors' in res ? res.errors : [];
      expect((list ?? []).map((e) => e.extensions?.code)).toEqual(['QUERY_TOO_COMPLEX']);
      expect(list?.[0]?.message).toMatch(/depth limit of 4/i);
    }
  });

  it('refuses too many aliases and too many tokens', async () => {
    const aliases = await gql(app, manyAliases, {}, user.token);
    expect(codes(aliases)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(aliases.errors?.[0]?.message).toMatch(/aliases limit/i);
    const tokens = await gql(app, `{ me { ${'login '.repeat(250)} } }`, {}, user.token);
    expect(codes(tokens)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(tokens.errors?.[0]?.message).toMatch(/token limit/i);
    expect(tokens.status).toBeLessThan(500);
  });
});

describe('nesting that would exhaust the parser', () => {
  // 3,000 nested list literals: 6 KB, inside the token limit, deeper than the parser's stack.
  const deepList = `{ rooms(first: ${'['.repeat(3000)}1${']'.repeat(3000)}) { edges { node { name } } } }`;

  it('is refused with QUERY_TOO_COMPLEX over HTTP and graphql-ws, and the server keeps answering', async () => {
    const plain = await startApp();
    expect(codes(await gql(plain, deepList))).toEqual(['QUERY_TOO_COMPLEX']);
    const client = wsClient(plain);
    const errors = await new Promise<unknown>((resolve) =>
      client.subscribe({ query: deepList }, { next: () => {}, error: resolve, complete: () => resolve(null) }),
    );
    expect(errors).toMatchObject([{ extensions: { code: 'QUERY_TOO_COMPLEX' } }]);
    await client.dispose();
    expect((await gql(plain, '{ __typename }')).data).toEqual({ __typename: 'Query' });
  });
});
