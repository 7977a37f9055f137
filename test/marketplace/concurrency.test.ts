/**
 * The invariants the bind LWT protects, under many buyers at once on the real
 * node: never oversold, every sold unit belongs to exactly one completed
 * purchase, and every buyer's history agrees.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { hourBucketsBetween } from '../../src/buckets.js';
import { BuyItemDocument, ItemDocument, ItemPurchasesDocument, MyPurchasesDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk, type GqlResult } from '../testkit/http.js';
import { createItem, cqlRow, cqlRows, uuid } from '../testkit/data/marketplace.js';
import { signUp, signUpMany, type TestUser } from '../testkit/data/users.js';
import type { BuyItemMutation } from '../generated/graphql.js';
import { globalIdOf, keyOf } from '../testkit/ids.js';
import { mapOf } from '../../src/db/cassandra/client.js';

const HEAVY = 300_000; // a shared 2-core machine: generous, and no timing is asserted

let app: App;
let seller: TestUser;
beforeAll(async () => {
  app = await startApp();
  seller = await signUp(app);
}, HEAVY);

type Result = GqlResult<BuyItemMutation>;

/** Reads the master row straight from Cassandra: the purchases map is the ground truth of what is sold. */
async function masterRow(itemId: string) {
  const row = await cqlRow(app, 'SELECT offered_units, available_units, auction_finished, purchases FROM items WHERE id = ?', [uuid(itemId)]);
  const map = new Map([...mapOf<number>(row?.purchases)].map(([k, v]) => [globalIdOf('Purchase', String(k)), v]));
  return { offered: row?.offered_units as number, available: row?.available_units as number, finished: row?.auction_finished as boolean, map };
}

/** Every buyer's history holds exactly their completed purchase(s) of this item, and nothing for a failed attempt. */
async function expectHistoriesMatch(buyers: TestUser[], results: Result[], itemId: string) {
  for (let i = 0; i < buyers.length; i += 10) {
    await Promise.all(
      buyers.slice(i, i + 10).map(async (buyer, j) => {
        const result = results[i + j]!;
        const history = await gqlOk(app, MyPurchasesDocument, {}, buyer.token);
        const ofItem = history.myPurchases.edges.map((e) => e.node).filter((p) => p.item.id === itemId);
        if (result.data?.buyItem) {
          expect(ofItem).toEqual([result.data.buyItem]);
        } else {
          expect(ofItem).toEqual([]);
        }
      }),
    );
  }
}

async function expectNothingPending(itemId: string) {
  const hours = hourBucketsBetween(new Date(Date.now() - 2 * 3_600_000), new Date());
  const rows = (await Promise.all(hours.map((h) => cqlRows(app, 'SELECT item_id FROM pending_purchases WHERE hour = ?', [h])))).flat();
  expect(rows.filter((r) => r.item_id.toString() === keyOf(itemId))).toEqual([]);
}

/** The seller's view of the item's purchases (purchases_by_item) holds exactly the completed ones. */
async function expectItemPurchases(itemId: string, completed: Array<{ id: string; quantity: number }>) {
  const page = (await gqlOk(app, ItemPurchasesDocument, { itemId: itemId, first: 200 }, seller.token)).item!.purchases;
  expect(page.pageInfo.hasNextPage).toBe(false);
  const listed = new Map(page.edges.map((e) => [e.node.id, e.node.quantity]));
  expect(listed).toEqual(new Map(completed.map((p) => [p.id, p.quantity])));
}

async function expectCompletedRows(purchaseIds: string[]) {
  const rows = await cqlRows(app, 'SELECT id, status, TTL(status) AS t, TTL(quantity) AS q FROM purchases WHERE id IN ?', [purchaseIds.map(uuid)]);
  expect(rows).toHaveLength(purchaseIds.length);
  for (const row of rows) expect({ status: row.status, t: row.t, q: row.q }).toEqual({ status: 'COMPLETED', t: null, q: null });
}

describe('concurrent buyers', () => {
  it(
    '100 buyers of 1 unit on 30 units: exactly 30 complete, the rest are refused, nothing is lost',
    async () => {
      const buyers = await signUpMany(app, 100, 'crowd');
      const tag = `crowd${Date.now().toString(36)}`;
      const item = await createItem(app, seller, { offeredUnits: 30, tags: [tag] });
      const stats = app.services.marketplace.stats;
      stats.maxBindAttempts = 0;
      const before = { ...stats };

      const results = await Promise.all(buyers.map((b) => gql(app, BuyItemDocument, { itemId: item.id, quantity: 1 }, b.token)));

      const completed = results.filter((r) => r.data?.buyItem).map((r) => r.data!.buyItem);
      const failures = results.filter((r) => !r.data?.buyItem).map((r) => codes(r)[0]);
      const conflicts = failures.filter((c) => c === 'CONFLICT').length;
      const retries = stats.bindRetries - before.bindRetries;
      console.info(
        `[marketplace] 100 buyers x 1 unit on 30 units: ${completed.length} completed, ` +
          `${failures.length - conflicts} NOT_ENOUGH_UNITS, ${conflicts} CONFLICT (bound ${app.services.config.marketplace.bindAttempts}), ` +
          `${retries} bind retries (at most ${stats.maxBindAttempts} attempts by one buyer); timings: npm run bench purchases`,
      );

      expect(completed).toHaveLength(30);
      expect(completed.every((p) => p.status === 'COMPLETED' && p.quantity === 1)).toBe(true);
      expect(new Set(failures)).toEqual(new Set(conflicts > 0 ? ['NOT_ENOUGH_UNITS', 'CONFLICT'] : ['NOT_ENOUGH_UNITS']));
      expect(failures).toHaveLength(70);
      expect(stats.bindConflicts - before.bindConflicts).toBe(conflicts);

      const master = await masterRow(item.id);
      expect(master).toMatchObject({ available: 0, finished: true });
      expect([...master.map.values()].reduce((a, b) => a + b, 0)).toBe(30);
      expect(new Set(master.map.keys())).toEqual(new Set(completed.map((p) => p.id)));
      expect((await gqlOk(app, ItemDocument, { itemId: item.id }, seller.token)).item).toMatchObject({ availableUnits: 0, auctionFinished: true });

      await expectCompletedRows(completed.map((p) => p.id));
      await expectItemPurchases(item.id, completed);
      await expectHistoriesMatch(buyers, results, item.id);
      await expectNothingPending(item.id);

      // Listings converge on the final stock whatever order the 30 refreshes landed in, and keep their TTL.
      const bySeller = await cqlRow(
        app,
        'SELECT available_units, auction_finished, TTL(available_units) AS t FROM items_by_seller WHERE seller = ? AND item_id = ?',
        [seller.login, uuid(item.id)],
      );
      const byTag = await cqlRow(app, 'SELECT available_units, auction_finished, TTL(available_units) AS t FROM items_by_tag WHERE tag = ? AND item_id = ?', [
        tag,
        uuid(item.id),
      ]);
      for (const listing of [bySeller, byTag]) {
        expect(listing).toMatchObject({ available_units: 0, auction_finished: true });
        expect(listing?.t).toBeGreaterThan(0);
      }
    },
    HEAVY,
  );

  it(
    '50 buyers of 1–5 units on 60 units: never oversold, and sold = purchases map = completed purchases',
    async () => {
      const buyers = await signUpMany(app, 50, 'mixed');
      const item = await createItem(app, seller, { offeredUnits: 60 });
      const quantities = buyers.map((_, i) => (i % 5) + 1); // 150 units wanted
      const results = await Promise.all(
        buyers.map((b, i) => gql(app, BuyItemDocument, { itemId: item.id, quantity: quantities[i]! }, b.token)),
      );

      const completed = results.filter((r) => r.data?.buyItem).map((r) => r.data!.buyItem);
      const soldByPurchases = completed.reduce((sum, p) => sum + p.quantity, 0);
      const master = await masterRow(item.id);
      const soldByMap = [...master.map.values()].reduce((a, b) => a + b, 0);

      // Whatever else answered (NOT_ENOUGH_UNITS, CONFLICT at the retry bound), the stock is the offer less
      // exactly the units of the purchases that completed, and never below zero.
      expect(master.offered).toBe(60);
      expect(master.available).toBe(60 - soldByPurchases);
      expect(soldByPurchases).toBeLessThanOrEqual(60);
      // Not vacuous: 150 units were wanted of 60, and some purchases went through.
      expect(completed.length).toBeGreaterThan(0);
      expect(master.offered - master.available).toBe(soldByMap);
      expect(soldByMap).toBe(soldByPurchases);
      expect(new Set(master.map.keys())).toEqual(new Set(completed.map((p) => p.id)));
      expect(master.finished).toBe(master.available === 0);
      completed.forEach((p) => expect(master.map.get(p.id)).toBe(p.quantity));

      // Each refusal is honest: NOT_ENOUGH_UNITS only when fewer units than wanted were left at the moment
      // it was given. The refusal reports that stock; it must be a stock the item really passed through
      // (the offer less some of the completed purchases), and below what was wanted.
      const reachable = stocksPassedThrough(master.offered, completed.map((p) => p.quantity));
      results.forEach((r, i) => {
        if (r.data?.buyItem) return;
        expect(['NOT_ENOUGH_UNITS', 'CONFLICT']).toContain(codes(r)[0]);
        if (codes(r)[0] !== 'NOT_ENOUGH_UNITS') return;
        const left = r.errors?.[0]?.extensions?.availableUnits as number;
        expect(left).toBeLessThan(quantities[i]!);
        expect(left).toBeGreaterThanOrEqual(master.available);
        expect(reachable.has(left), `stock ${left} when refused`).toBe(true);
      });

      await expectCompletedRows(completed.map((p) => p.id));
      await expectItemPurchases(item.id, completed);
      await expectHistoriesMatch(buyers, results, item.id);
      await expectNothingPending(item.id);
    },
    HEAVY,
  );
});

/** Every stock an item offering `offered` units can have had: the offer less the quantities of any subset of its sales. */
function stocksPassedThrough(offered: number, sold: number[]): Set<number> {
  let sums = new Set([0]);
  for (const q of sold) sums = new Set([...sums, ...[...sums].map((s) => s + q)]);
  return new Set([...sums].filter((s) => s <= offered).map((s) => offered - s));
}
