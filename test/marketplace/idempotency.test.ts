/**
 * buyItem with a clientPurchaseId: one purchase per buyer and key, whatever
 * races or retries, on the real node.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { hourBucketsBetween } from '../../src/buckets.js';
import { TimeUuid } from '../../src/db/cassandra/client.js';
import { BuyItemDocument, ItemDocument, ItemPurchasesDocument, MyPurchasesDocument } from '../generated/graphql.js';
import { ManualClock, startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { createItem, cqlRow, cqlRows, uuid } from '../testkit/data/marketplace.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { onceHook } from '../testkit/faults/fault-hooks.js';
import { globalIdOf, keyOf } from '../testkit/ids.js';
import { mapOf } from '../../src/db/cassandra/client.js';

let app: App;
let seller: TestUser;
let buyer: TestUser;
let other: TestUser;
beforeAll(async () => {
  app = await startApp();
  [seller, buyer, other] = await signUpMany(app, 3, 'idem');
});

/** The item's purchases map, straight from the master row: what the bind LWT recorded as sold. */
async function boundPurchases(itemId: string): Promise<Map<string, number>> {
  const row = await cqlRow(app, 'SELECT purchases FROM items WHERE id = ?', [uuid(itemId)]);
  return new Map([...mapOf<number>(row?.purchases)].map(([k, v]) => [globalIdOf('Purchase', String(k)), v]));
}

const claimRow = (login: string, key: string) =>
  cqlRow(app, 'SELECT purchase_id, TTL(quantity) AS t FROM purchase_client_ids WHERE buyer = ? AND client_purchase_id = ?', [login, key]);

/** The buyer's claim on `key` as a request that died before its bind ten minutes ago would have left it. */
async function plantDeadClaim(key: string, itemId: string, quantity: number) {
  const dead = TimeUuid.fromDate(new Date(Date.now() - 10 * 60_000));
  await cqlRow(app, 'INSERT INTO purchase_client_ids (buyer, client_purchase_id, purchase_id, item_id, quantity) VALUES (?, ?, ?, ?, ?)', [
    buyer.login,
    key,
    dead,
    uuid(itemId),
    quantity,
  ]);
  return dead;
}

async function pendingOf(itemId: string): Promise<string[]> {
  const hours = hourBucketsBetween(new Date(Date.now() - 3_600_000), new Date());
  const rows = (await Promise.all(hours.map((h) => cqlRows(app, 'SELECT purchase_id, item_id FROM pending_purchases WHERE hour = ?', [h])))).flat();
  return rows.filter((r) => r.item_id.toString() === keyOf(itemId)).map((r) => globalIdOf('Purchase', r.purchase_id.toString()));
}

describe('buyItem with a clientPurchaseId', () => {
  it('10 concurrent attempts with one key: one purchase, stock taken once, all ten answer with it', async () => {
    const item = await createItem(app, seller, { offeredUnits: 20 });
    const key = `order-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => gql(app, BuyItemDocument, { itemId: item.id, quantity: 3, clientPurchaseId: key }, buyer.token)),
    );
    expect(results.flatMap((r) => codes(r))).toEqual([]);
    const ids = new Set(results.map((r) => r.data!.buyItem.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    for (const r of results) expect(r.data!.buyItem).toMatchObject({ status: 'COMPLETED', quantity: 3, buyer: { login: buyer.login } });

    expect(await boundPurchases(item.id)).toEqual(new Map([[id, 3]]));
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(17);
    const mine = (await gqlOk(app, MyPurchasesDocument, {}, buyer.token)).myPurchases.edges.filter((e) => e.node.item.id === item.id);
    expect(mine.map((e) => e.node.id)).toEqual([id]);
    const ofItem = (await gqlOk(app, ItemPurchasesDocument, { itemId: item.id }, seller.token)).item?.purchases.edges ?? [];
    expect(ofItem.map((e) => e.node.id)).toEqual([id]);
    expect(await pendingOf(item.id)).toEqual([]);
    // The key is remembered for a day, no longer.
    const claim = await claimRow(buyer.login, key);
    expect(claim?.purchase_id.toString()).toBe(keyOf(id));
    expect(claim?.t).toBeGreaterThan(24 * 3600 - 600);
    expect(claim?.t).toBeLessThanOrEqual(24 * 3600);
  });

  it('a retry after success answers with the original purchase, even once the item is sold out; keys are per buyer', async () => {
    const item = await createItem(app, seller, { offeredUnits: 2 });
    const key = 'checkout-42';
    const first = (await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 2, clientPurchaseId: key }, buyer.token)).buyItem;
    expect(first.status).toBe('COMPLETED');
    const retry = (await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 2, clientPurchaseId: key }, buyer.token)).buyItem;
    expect(retry).toEqual(first);
    expect(await boundPurchases(item.id)).toEqual(new Map([[first.id, 2]]));
    // Another buyer's identical key is their own purchase: the item is sold out for them.
    expect(codes(await gql(app, BuyItemDocument, { itemId: item.id, quantity: 2, clientPurchaseId: key }, other.token))).toEqual([
      'NOT_ENOUGH_UNITS',
    ]);
  });

  it('refuses a key reused for another item or quantity, and malformed keys, naming clientPurchaseId', async () => {
    const item = await createItem(app, seller, { offeredUnits: 10 });
    const key = `reuse-${Date.now()}`;
    await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 1, clientPurchaseId: key }, buyer.token);
    const item2 = await createItem(app, seller, { offeredUnits: 10 });
    const cases = [
      { itemId: item.id, quantity: 2, clientPurchaseId: key },
      { itemId: item2.id, quantity: 1, clientPurchaseId: key },
      { itemId: item.id, quantity: 1, clientPurchaseId: '' },
      { itemId: item.id, quantity: 1, clientPurchaseId: 'k'.repeat(65) },
      { itemId: item.id, quantity: 1, clientPurchaseId: 'k'.repeat(70_000) },
      { itemId: item.id, quantity: 1, clientPurchaseId: 'line\nbreak' },
    ];
    for (const variables of cases) {
      const res = await gql(app, BuyItemDocument, variables, buyer.token);
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'clientPurchaseId' });
    }
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(9);
    expect((await gqlOk(app, ItemDocument, { itemId: item2.id }, buyer.token)).item?.availableUnits).toBe(10);
    // The limit itself is a valid key.
    const longest = await gqlOk(app, BuyItemDocument, { itemId: item2.id, quantity: 1, clientPurchaseId: 'k'.repeat(64) }, buyer.token);
    expect(longest.buyItem.status).toBe('COMPLETED');
  });

  it('a failed attempt that bought nothing frees its key for another try', async () => {
    const item = await createItem(app, seller, { offeredUnits: 3 });
    const key = `free-${Date.now()}`;
    expect(codes(await gql(app, BuyItemDocument, { itemId: item.id, quantity: 5, clientPurchaseId: key }, buyer.token))).toEqual([
      'NOT_ENOUGH_UNITS',
    ]);
    expect(await claimRow(buyer.login, key)).toBeUndefined();
    // Not "already used for another quantity": the key is free again.
    const bought = (await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 2, clientPurchaseId: key }, buyer.token)).buyItem;
    expect(bought).toMatchObject({ status: 'COMPLETED', quantity: 2 });
    expect(await boundPurchases(item.id)).toEqual(new Map([[bought.id, 2]]));
  });

  it('a retry after the first attempt died past its bind completes and answers with that purchase', async () => {
    const item = await createItem(app, seller, { offeredUnits: 5 });
    const key = `crash-${Date.now()}`;
    const hooks = app.services.marketplace.hooks;
    let boundId = '';
    onceHook(hooks, 'afterBind', (id) => {
      boundId = globalIdOf('Purchase', id);
      throw new Error('the process died after the bind');
    });
    expect(codes(await gql(app, BuyItemDocument, { itemId: item.id, quantity: 2, clientPurchaseId: key }, buyer.token))).toEqual([
      'INTERNAL_SERVER_ERROR',
    ]);
    // The key still names the bound purchase: the retry learns the outcome rather than buying again.
    expect((await claimRow(buyer.login, key))?.purchase_id.toString()).toBe(keyOf(boundId));
    const retry = (await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 2, clientPurchaseId: key }, buyer.token)).buyItem;
    expect(retry).toMatchObject({ id: boundId, status: 'COMPLETED', quantity: 2 });
    expect(await boundPurchases(item.id)).toEqual(new Map([[boundId, 2]]));
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(3);
    expect(await pendingOf(item.id)).toEqual([]);
  });

  it('a retry takes over a key whose purchase never bound and can no longer bind', async () => {
    const item = await createItem(app, seller, { offeredUnits: 5 });
    const key = `stale-${Date.now()}`;
    // A claim left by a request that died before its bind ten minutes ago (no request binds past 30 s).
    const dead = await plantDeadClaim(key, item.id, 1);
    const bought = (await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 1, clientPurchaseId: key }, buyer.token)).buyItem;
    expect(bought.status).toBe('COMPLETED');
    expect(bought.id).not.toBe(globalIdOf('Purchase', dead.toString()));
    expect((await claimRow(buyer.login, key))?.purchase_id.toString()).toBe(keyOf(bought.id));
    expect(await boundPurchases(item.id)).toEqual(new Map([[bought.id, 1]]));
  });

  it('10 concurrent retries on a stale key: one takes it over, one purchase bound, stock taken once, all ten answer with it', async () => {
    const item = await createItem(app, seller, { offeredUnits: 20 });
    const key = `stale-race-${Date.now()}`;
    // A claim left by a request that died before its bind ten minutes ago: every retry below finds it stale.
    const dead = await plantDeadClaim(key, item.id, 2);
    // Every retry's takeover LWT waits until all ten have found the key stale, so they really race.
    const claims = app.services.stores.purchaseClaims;
    const takeOver = claims.takeOver.bind(claims);
    const outcomes: boolean[] = [];
    let arrived = 0;
    let allArrived!: () => void;
    const barrier = new Promise<void>((resolve) => (allArrived = resolve));
    const spy = vi.spyOn(claims, 'takeOver').mockImplementation(async (...args) => {
      if (++arrived === 10) allArrived();
      await barrier;
      const applied = await takeOver(...args);
      outcomes.push(applied);
      return applied;
    });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => gql(app, BuyItemDocument, { itemId: item.id, quantity: 2, clientPurchaseId: key }, buyer.token)),
    ).finally(() => spy.mockRestore());
    expect(outcomes.sort()).toEqual([false, false, false, false, false, false, false, false, false, true]);
    expect(results.flatMap((r) => codes(r))).toEqual([]);
    const ids = new Set(results.map((r) => r.data!.buyItem.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids] as [string];
    expect(id).not.toBe(globalIdOf('Purchase', dead.toString()));
    for (const r of results) expect(r.data!.buyItem).toMatchObject({ status: 'COMPLETED', quantity: 2 });

    // Exactly one takeover applied: the key names the one purchase, and only it is bound.
    expect((await claimRow(buyer.login, key))?.purchase_id.toString()).toBe(keyOf(id));
    expect(await boundPurchases(item.id)).toEqual(new Map([[id, 2]]));
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(18);
    const mine = (await gqlOk(app, MyPurchasesDocument, {}, buyer.token)).myPurchases.edges.filter((e) => e.node.item.id === item.id);
    expect(mine.map((e) => e.node.id)).toEqual([id]);
    expect(await pendingOf(item.id)).toEqual([]);
  });

  it('no request binds a purchase past the bind deadline (what makes the takeover above safe)', async () => {
    const clock = new ManualClock(new Date());
    const clocked = await startApp({ clock });
    const item = await createItem(clocked, seller, { offeredUnits: 5 }, clock.now());
    const hooks = clocked.services.marketplace.hooks;
    // The request stalls for 31 s between creating its purchase and binding it.
    onceHook(hooks, 'beforeBind', () => {
      clock.advance(31_000);
    });
    const key = `late-${Date.now()}`;
    expect(codes(await gql(clocked, BuyItemDocument, { itemId: item.id, quantity: 1, clientPurchaseId: key }, buyer.token))).toEqual(['CONFLICT']);
    expect(await boundPurchases(item.id)).toEqual(new Map());
    expect((await gqlOk(clocked, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(5);
    // It bought nothing, so its key is free and its pending entry gone.
    expect(await claimRow(buyer.login, key)).toBeUndefined();
    expect(await pendingOf(item.id)).toEqual([]);
  });
});
