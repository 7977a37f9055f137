/**
 * What nodes(ids:) costs in Cassandra: one request for 50 objects of one type, for each of the seven Node types,
 * sends a small constant number of statements (each type read through its domain's per-request loader), never
 * one or two per id. The count is the app's own: its /metrics counts every request the driver sent.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { startApp } from '../../testkit/app.js';
import { gql, gqlOk } from '../../testkit/http.js';
import { scrape } from '../../testkit/metrics.js';
import { eventually } from '../../testkit/poll.js';
import { recordCql } from '../../testkit/faults/cql-spy.js';
import { globalIdOf } from '../../testkit/ids.js';
import { signUp, signUpMany, type TestUser } from '../../testkit/data/users.js';
import { messageKey, post, roomWith } from '../../testkit/data/rooms.js';
import { send, timeUuidOf } from '../../testkit/data/messenger.js';
import { createItem } from '../../testkit/data/marketplace.js';
import { TimeUuid } from '../../../src/db/cassandra/client.js';
import { BuyItemDocument } from '../../generated/graphql.js';

const N = 50;
const NODES = 'query Nodes($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }';
const REQUESTS = 'parley_cassandra_request_duration_seconds_count';

interface Case {
  type: string;
  ids: string[];
  /** The most statements the request may send, and why. */
  bound: number;
  why: string;
  /** The tables those statements read: any other statement in the window was a background job's. */
  tables: string[];
}

let app: App;
let viewer: TestUser;
/** Signed in, and party to none of the viewer's rooms, conversations or purchases. */
let outsider: TestUser;
const cases: Case[] = [];

/** Runs `make` for 0..n-1, ten at a time (the setup is a few hundred requests). */
async function tenAtATime<T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += 10) out.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, j) => make(i + j)))));
  return out;
}

/** Each distinct statement once, with how many times it was sent. */
const tally = (statements: string[]) =>
  [...Map.groupBy(statements, (s) => s)].map(([cql, sent]) => `${sent.length} × ${cql}`).join('\n');
const distinct = (values: unknown[]) => new Set(values).size;
const monthOf = (directMessageId: string) => TimeUuid.fromString(timeUuidOf(directMessageId)).getDate().toISOString().slice(0, 7);

beforeAll(async () => {
  // The background jobs read their lists at start and then every interval: an hour keeps them out of the
  // measured windows but for the run at start (and statementsOf below notices one that falls in anyway).
  app = await startApp({ env: { PURCHASE_RECOVERY_INTERVAL_MS: '3600000', ROOM_CLEANUP_INTERVAL_MS: '3600000' } });
  [viewer, outsider] = await Promise.all([signUp(app), signUp(app)]);
  const people = await signUpMany(app, N, 'nodes');
  const seller = people[0]!;

  const rooms = await tenAtATime(N, () => roomWith(app, viewer));
  const messages = [];
  for (let i = 0; i < N; i++) messages.push(await post(app, viewer, rooms[0]!, `message ${i}`));
  // Each person writes to the viewer once: 50 conversations of the viewer's, each with an unread row.
  await tenAtATime(N, (i) => send(app, people[i]!, viewer, `hello ${i}`));
  const directMessages = [];
  for (let i = 0; i < N; i++) directMessages.push(await send(app, viewer, seller, `dm ${i}`));
  const items = await tenAtATime(N, () => createItem(app, seller));
  const purchases = await tenAtATime(N, async (i) => (await gqlOk(app, BuyItemDocument, { itemId: items[i]!.id, quantity: 1 }, viewer.token)).buyItem);

  // Messages are read one day at a time and direct messages one month at a time: posted within seconds, they
  // share one, but a run across midnight UTC (or a month's end) may see two.
  const days = distinct(messages.map((m) => messageKey(m.id).bucket));
  const months = distinct(directMessages.map((m) => monthOf(m.id)));
  cases.push(
    { type: 'User', ids: people.map((p) => globalIdOf('User', p.login)), bound: 1, why: 'one login IN read', tables: ['users'] },
    { type: 'Room', ids: rooms.map((name) => globalIdOf('Room', name)), bound: 1, why: 'one room_name IN read', tables: ['chat_rooms'] },
    {
      type: 'Message',
      ids: messages.map((m) => m.id),
      bound: days + 1,
      why: `one message_id IN read per day bucket (${days}), and one read of their room`,
      tables: ['chat_room_messages', 'chat_rooms'],
    },
    {
      type: 'Conversation',
      ids: people.map((p) => globalIdOf('Conversation', [viewer.login, p.login].sort().join(':'))),
      bound: 3,
      why: "one read of the partners' accounts (each must exist), one partner IN read of the inbox, one of its unread rows",
      tables: ['users', 'inbox', 'inbox_unread'],
    },
    {
      type: 'DirectMessage',
      ids: directMessages.map((m) => m.id),
      bound: months,
      why: `one id IN read per month partition of the conversation (${months})`,
      tables: ['direct_messages'],
    },
    { type: 'Item', ids: items.map((i) => i.id), bound: 1, why: 'one id IN read', tables: ['items'] },
    { type: 'Purchase', ids: purchases.map((p) => p.id), bound: 1, why: 'one id IN read', tables: ['purchases'] },
  );
}, 300_000);

/**
 * The statements one nodes(ids:) request sends: the move of the driver's request count on /metrics across it.
 * The window is taken again while anything else shares it: a request still in flight when it opens, a statement
 * the Database spy saw on another table, or a count the spy's statements do not account for (the spy leaves the
 * jobs' list reads out, /metrics does not).
 */
async function statementsOf(c: Case): Promise<{ count: number; statements: string[]; nodes: unknown[] }> {
  const reads = (cql: string) => c.tables.some((table) => new RegExp(`^SELECT .* FROM ${table} WHERE `).test(cql));
  return eventually(
    async () => {
      const driver = app.services.db.client.getState();
      if (driver.getConnectedHosts().some((host) => driver.getInFlightQueries(host) > 0)) return undefined;
      const spy = recordCql(app);
      try {
        const before = (await scrape(app)).value(REQUESTS);
        const result = await gql<{ nodes: unknown[] }, { ids: string[] }>(app, NODES, { ids: c.ids }, viewer.token);
        const count = (await scrape(app)).value(REQUESTS) - before;
        const statements = spy.statements();
        if (statements.length !== count || !statements.every(reads)) return undefined;
        return { count, statements, nodes: result.data?.nodes ?? [] };
      } finally {
        spy.stop();
      }
    },
    { what: `a window with no background statement (${c.type})` },
  );
}

describe('nodes(ids:) with 50 ids of one type', () => {
  it.each(['User', 'Room', 'Message', 'Conversation', 'DirectMessage', 'Item', 'Purchase'])('%s: a bounded number of statements', async (type) => {
    const c = cases.find((x) => x.type === type)!;
    expect(c.ids).toHaveLength(N);
    // Once before counting: the first use of a statement on this instance prepares it.
    expect((await gql(app, NODES, { ids: c.ids }, viewer.token)).errors).toBeUndefined();

    const { count, statements, nodes } = await statementsOf(c);
    // Every object is there, and visible to the viewer: the count is that of real reads, not of nulls.
    expect(nodes).toEqual(c.ids.map((id) => ({ __typename: type, id })));
    expect(count, `${type}: ${c.why}; sent:\n${tally(statements)}`).toBeLessThanOrEqual(c.bound);
    expect(count).toBeGreaterThan(0);
  });

  it("authorizes each id of a batch as its type's own query does: another user sees only what anyone may", async () => {
    const ids = cases.flatMap((c) => c.ids.slice(0, 10));
    const { data, errors } = await gql<{ nodes: Array<{ __typename: string } | null> }, { ids: string[] }>(app, NODES, { ids }, outsider.token);
    expect(errors).toBeUndefined();
    const seen = cases.flatMap((c) => c.ids.slice(0, 10).map(() => (['User', 'Room', 'Item'].includes(c.type) ? c.type : null)));
    expect(data!.nodes.map((n) => n?.__typename ?? null)).toEqual(seen);
  });
});
