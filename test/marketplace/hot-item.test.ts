/**
 * One item's stock under a burst of buyers from two instances at once: every bind is an LWT on the item's one
 * partition, so the burst is that partition's hot spot. Exactly the stock is sold, every other buyer hears the
 * item is sold out (NOT_ENOUGH_UNITS; none SERVICE_UNAVAILABLE from Paxos contention, none CONFLICT), and the
 * master row keeps sold = offered - stock, never below zero.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { BuyItemDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql } from '../testkit/http.js';
import { createItem, cqlRow, uuid } from '../testkit/data/marketplace.js';
import { signUp, signUpMany, type TestUser } from '../testkit/data/users.js';
import { globalIdOf } from '../testkit/ids.js';
import { mapOf } from '../../src/db/cassandra/client.js';

const HEAVY = 300_000; // a shared 2-core machine: generous, and no timing is asserted

let a: App;
let b: App;
let seller: TestUser;
let buyers: TestUser[];

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  seller = await signUp(a);
  buyers = await signUpMany(a, 60, 'hot');
}, HEAVY);

const either = (i: number) => (i % 2 === 0 ? a : b);

describe('a hot item bought from two instances at once', () => {
  it(
    '60 buyers of 1 unit on 45 units: exactly 45 sold, the other 15 told it is sold out',
    async () => {
      const item = await createItem(a, seller, { offeredUnits: 45 });
      const retriesBefore = a.services.marketplace.stats.bindRetries + b.services.marketplace.stats.bindRetries;

      const results = await Promise.all(buyers.map((buyer, i) => gql(either(i), BuyItemDocument, { itemId: item.id, quantity: 1 }, buyer.token)));

      const bought = results.flatMap((r) => (r.data?.buyItem ? [r.data.buyItem] : []));
      const failures = results.flatMap(codes);
      const byCode = failures.reduce<Record<string, number>>((n, c) => ({ ...n, [String(c)]: (n[String(c)] ?? 0) + 1 }), {});
      const retries = a.services.marketplace.stats.bindRetries + b.services.marketplace.stats.bindRetries - retriesBefore;
      console.info(`[hot item] 60 buyers on 45 units from two instances: ${bought.length} bought, failures ${JSON.stringify(byCode)}, ${retries} bind retries`);
      expect(bought).toHaveLength(45);
      expect(bought.every((p) => p.status === 'COMPLETED')).toBe(true);
      expect(failures).toEqual(Array(15).fill('NOT_ENOUGH_UNITS'));
      // The bound: an instance binds one purchase of an item at a time, from the stock its last bind left, so a
      // bind that lost was beaten by a sale on the other instance since: at most one lost bind per unit sold.
      expect(retries).toBeLessThanOrEqual(45);

      const row = await cqlRow(a, 'SELECT offered_units, available_units, auction_finished, purchases FROM items WHERE id = ?', [uuid(item.id)]);
      const sold = new Map([...mapOf<number>(row?.purchases)].map(([k, v]) => [globalIdOf('Purchase', String(k)), v]));
      expect({ available: row?.available_units, finished: row?.auction_finished }).toEqual({ available: 0, finished: true });
      expect(new Set(sold.keys())).toEqual(new Set(bought.map((p) => p.id)));
      expect([...sold.values()].reduce((x, y) => x + y, 0)).toBe(row?.offered_units - row?.available_units);
    },
    HEAVY,
  );
});
