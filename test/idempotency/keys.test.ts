/**
 * Idempotency keys as a client uses them, over HTTP (the JSON fast path and
 * Yoga alike): the same key and arguments give the first answer again and
 * one record (counted in CQL), other arguments are refused, racing requests
 * with one key apply once, an answer whose outcome was unknown is not kept, and
 * one over 64 KiB is kept as its size only.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { roomWith } from '../testkit/data/rooms.js';
import { cqlRow, cqlRows } from '../testkit/cql.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { itemInput } from '../testkit/data/marketplace.js';
import { failNextStatement } from '../testkit/faults/statement-faults.js';
import { parse, print } from 'graphql';
import { TimeUuid } from '../../src/db/cassandra/client.js';
import { fingerprintOf } from '../../src/resolvers/idempotency/keys.js';
import { keyOf } from '../testkit/ids.js';
import { wsClient } from '../testkit/ws.js';

const CREATE_ITEM = 'mutation CreateItem($input: CreateItemInput!) { createItem(input: $input) { id name offeredUnits } }';
const ME = 'query { me { login } }';

let app: App;
let seller: TestUser;
let other: TestUser;
beforeAll(async () => {
  app = await startApp();
  [seller, other] = await signUpMany(app, 2, 'idemkey');
});

const withKey = (key: string) => ({ 'idempotency-key': key });
const itemsOf = async (login: string, name: string) =>
  (await cqlRows(app, 'SELECT item_id, name FROM items_by_seller WHERE seller = ?', [login])).filter((r) => r.name === name);

describe('an Idempotency-Key on a mutation', () => {
  it('the same key and arguments: the first answer again, one item; other arguments: IDEMPOTENCY_KEY_REUSED (422)', async () => {
    const key = randomUUID();
    const input = itemInput({ name: `lamp ${key}` });
    // Three times: the third goes through the prepared (compiled) path the fast path takes for a known operation.
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await gql(app, CREATE_ITEM, { input }, seller.token, withKey(key)));
    for (const a of answers) expect(a.errors).toBeUndefined();
    expect(new Set(answers.map((a) => JSON.stringify(a.data))).size).toBe(1);
    expect(await itemsOf(seller.login, input.name)).toHaveLength(1);

    const changed = await gql(app, CREATE_ITEM, { input: { ...input, offeredUnits: 11 } }, seller.token, withKey(key));
    expect(changed.status).toBe(422);
    expect(codes(changed)).toEqual(['IDEMPOTENCY_KEY_REUSED']);
    expect(await itemsOf(seller.login, input.name)).toHaveLength(1);
  });

  it('in extensions.idempotencyKey it is the same key as the header', async () => {
    const key = randomUUID();
    const input = itemInput({ name: `ext ${key}` });
    const viaHeader = await gql(app, CREATE_ITEM, { input }, seller.token, withKey(key));
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${seller.token}` },
      body: JSON.stringify({ query: CREATE_ITEM, variables: { input }, extensions: { idempotencyKey: key } }),
    });
    expect(await res.json()).toEqual({ data: viaHeader.data });
    expect(await itemsOf(seller.login, input.name)).toHaveLength(1);
  });

  it('over graphql-ws, extensions.idempotencyKey: the same answer as over HTTP with that key, one item', async () => {
    const key = randomUUID();
    const input = itemInput({ name: `ws ${key}` });
    const viaHttp = await gql(app, CREATE_ITEM, { input }, seller.token, withKey(key));
    const client = wsClient(app, seller.token);
    try {
      const viaWs = await new Promise<unknown>((resolve, reject) => {
        let result: unknown;
        client.subscribe(
          { query: CREATE_ITEM, variables: { input }, extensions: { idempotencyKey: key } },
          { next: (value) => (result = value), error: reject, complete: () => resolve(result) },
        );
      });
      expect(viaWs).toEqual({ data: viaHttp.data });
    } finally {
      await client.dispose();
    }
    expect(await itemsOf(seller.login, input.name)).toHaveLength(1);
  });

  it("is the viewer's own: another user's same key creates their own item", async () => {
    const key = randomUUID();
    const input = itemInput({ name: `mine ${key}` });
    const a = await gql(app, CREATE_ITEM, { input }, seller.token, withKey(key));
    const b = await gql(app, CREATE_ITEM, { input }, other.token, withKey(key));
    expect(a.errors).toBeUndefined();
    expect(b.errors).toBeUndefined();
    expect(b.data).not.toEqual(a.data);
    expect(await gql(app, CREATE_ITEM, { input }, seller.token, withKey(key))).toEqual(a);
    expect(await itemsOf(seller.login, input.name)).toHaveLength(1);
    expect(await itemsOf(other.login, input.name)).toHaveLength(1);
  });

  it('10 requests at once with one key: one item; each answers it, or IDEMPOTENCY_KEY_IN_USE (409)', async () => {
    const key = randomUUID();
    const input = itemInput({ name: `race ${key}` });
    const answers = await Promise.all(Array.from({ length: 10 }, () => gql(app, CREATE_ITEM, { input }, seller.token, withKey(key))));
    const ok = answers.filter((a) => !a.errors);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((a) => JSON.stringify(a.data))).size).toBe(1);
    for (const a of answers.filter((x) => x.errors)) {
      expect(codes(a)).toEqual(['IDEMPOTENCY_KEY_IN_USE']);
      expect(a.status).toBe(409);
    }
    expect(await itemsOf(seller.login, input.name)).toHaveLength(1);
  });

  it('an answer of unknown outcome (storage timed out) is not kept: the same key runs again, and answers the one item', async () => {
    const key = randomUUID();
    const input = itemInput({ name: `unknown ${key}` });
    const staged = failNextStatement(app, /INSERT INTO items /);
    const first = await gql(app, CREATE_ITEM, { input }, seller.token, withKey(key));
    expect(staged.fired()).toBe(true);
    expect(codes(first)).toEqual(['SERVICE_UNAVAILABLE']);
    // Released: no answer kept, no attempt holding it.
    const row = await cqlRow(app, 'SELECT fingerprint, attempt, response FROM idempotency_keys WHERE viewer = ? AND key = ?', [seller.login, key]);
    expect(row?.fingerprint).toBeTruthy();
    expect(row?.attempt).toBeNull();
    expect(row?.response).toBeNull();
    const again = await gql(app, CREATE_ITEM, { input }, seller.token, withKey(key));
    expect(again.errors).toBeUndefined();
    expect(await itemsOf(seller.login, input.name)).toHaveLength(1);
  });

  it('refuses a malformed key with BAD_USER_INPUT (400) naming it, and ignores a key on a query', async () => {
    for (const bad of ['short', 'x'.repeat(256), 'has space inside', 'é-not-ascii-key']) {
      const res = await gql(app, CREATE_ITEM, { input: itemInput() }, seller.token, withKey(bad));
      expect(codes(res)).toEqual(['BAD_USER_INPUT']);
      expect(res.status).toBe(400);
      expect(res.errors?.[0]?.extensions?.field).toBe('Idempotency-Key');
    }
    const me = await gql(app, ME, {}, seller.token, withKey('short'));
    expect(me.errors).toBeUndefined();
  });

  it('an attempt unanswered past its lease (its instance died) is taken over, and the item takes the id the key was given first', async () => {
    const key = randomUUID();
    const input = itemInput({ name: `orphan ${key}` });
    const seed = TimeUuid.fromDate(new Date(Date.now() - 120_000));
    await plantAttempt(key, { input }, seed, new Date(Date.now() - 120_000));
    const taken = await gql(app, CREATE_ITEM, { input }, seller.token, withKey(key));
    expect(taken.errors).toBeUndefined();
    expect(keyOf((taken.data as { createItem: { id: string } }).createItem.id)).toBe(seed.toString());
    expect(await itemsOf(seller.login, input.name)).toHaveLength(1);
  });

  it('an attempt still inside its lease: IDEMPOTENCY_KEY_IN_USE (409) with retryAfter, and nothing runs', async () => {
    const key = randomUUID();
    const input = itemInput({ name: `running ${key}` });
    await plantAttempt(key, { input }, TimeUuid.now(), new Date());
    const busy = await gql(app, CREATE_ITEM, { input }, seller.token, withKey(key));
    expect(busy.status).toBe(409);
    expect(codes(busy)).toEqual(['IDEMPOTENCY_KEY_IN_USE']);
    expect(busy.errors?.[0]?.extensions?.retryAfter).toBeGreaterThan(0);
    expect(await itemsOf(seller.login, input.name)).toHaveLength(0);
  });

  it('an answer over 64 KiB is not kept: the row holds its size, and a retry answers IDEMPOTENCY_RESPONSE_TOO_LARGE (422)', async () => {
    const room = await roomWith(app, seller);
    // Six messages of 4,000 three-byte characters: 72 KB of answer.
    for (let i = 0; i < 6; i++) await gqlOk(app, 'mutation($r: String!, $c: String!) { postMessage(roomName: $r, content: $c) { id } }' as never, { r: room, c: '€'.repeat(4000) } as never, seller.token);
    const JOIN = 'mutation($r: String!) { joinRoom(roomName: $r) { name messages(first: 10) { edges { node { content } } } } }';
    const key = randomUUID();
    const first = await gql(app, JOIN, { r: room }, other.token, withKey(key));
    expect(first.errors).toBeUndefined();
    expect(Buffer.byteLength(JSON.stringify(first.data))).toBeGreaterThan(64 * 1024);
    const row = await cqlRow(app, 'SELECT response FROM idempotency_keys WHERE viewer = ? AND key = ?', [other.login, key]);
    expect(Buffer.byteLength(row?.response as string)).toBeLessThan(1024);
    const again = await gql(app, JOIN, { r: room }, other.token, withKey(key));
    expect(again.status).toBe(422);
    expect(codes(again)).toEqual(['IDEMPOTENCY_RESPONSE_TOO_LARGE']);
    expect(again.errors?.[0]?.extensions).toMatchObject({ field: 'Idempotency-Key', maxBytes: 64 * 1024 });
  });
});

/** The seller's key as an attempt that started at `startedAt` and never answered left it. */
async function plantAttempt(key: string, variables: Record<string, unknown>, seed: TimeUuid, startedAt: Date) {
  const fingerprint = fingerprintOf(print(parse(CREATE_ITEM)), undefined, variables);
  await cqlRows(app, 'INSERT INTO idempotency_keys (viewer, key, fingerprint, seed, attempt, attempt_started_at) VALUES (?, ?, ?, ?, ?, ?) USING TTL 600', [
    seller.login,
    key,
    fingerprint,
    seed,
    seed,
    startedAt,
  ]);
}
