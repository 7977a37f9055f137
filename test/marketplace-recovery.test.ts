/**
 * Crash safety: a purchase bound to its item ends COMPLETED even when the
 * request dies between the bind and the completion; one that never bound
 * leaves no trace but its expiring CREATED row.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { hourBucketsBetween } from '../src/buckets.js';
import { completePurchase, recoverPendingPurchases } from '../src/resolvers/marketplace/completion.js';
import { marketplace } from '../src/resolvers/marketplace/runtime.js';
import { BuyItemDocument, ItemDocument, ItemPurchasesDocument, ItemsByTagDocument, MyPurchasesDocument, PurchaseDocument } from './generated/graphql.js';
import { startApp } from './testkit/app.js';
import { codes, gql, gqlOk } from './testkit/http.js';
import { createItem, cqlRow, cqlRows, uuid } from './testkit/marketplace.js';
import { eventually } from './testkit/poll.js';
import { signUpMany, type TestUser } from './testkit/users.js';

// Recovery runs at start and then hourly here, so only the runs a test asks for happen.
const QUIET = { PURCHASE_RECOVERY_INTERVAL_MS: String(3_600_000) };

let app: App;
let seller: TestUser;
let buyer: TestUser;
beforeAll(async () => {
  app = await startApp({ env: QUIET });
  [seller, buyer] = await signUpMany(app, 2, 'crash');
  // Let the run at start finish, so no recovery run overlaps the interruptions below.
  await eventually(() => marketplace(app.services).stats.recoveryRuns >= 1, { what: 'the recovery run at start' });
});

class SimulatedCrash extends Error {}

/**
 * Buys with a request that dies right after the bind; returns the purchase id
 * read from the item, bound and (unless recovery runs often here) still CREATED.
 */
async function buyAndCrashAfterBind(on: App, itemId: string, quantity: number, expectStatus = ['CREATED']): Promise<string> {
  const hooks = marketplace(on.services).hooks;
  hooks.afterBind = () => {
    hooks.afterBind = undefined;
    throw new SimulatedCrash('the process died after the bind');
  };
  const res = await gql(on, BuyItemDocument, { itemId, quantity }, buyer.token);
  expect(codes(res)).toEqual(['INTERNAL_SERVER_ERROR']);
  const bound = await gqlOk(on, ItemPurchasesDocument, { id: itemId }, seller.token);
  const edges = bound.item?.purchases.edges ?? [];
  expect(edges).toHaveLength(1);
  expect(edges[0]?.node.quantity).toBe(quantity);
  expect(expectStatus).toContain(edges[0]?.node.status);
  return edges[0]!.node.id;
}

async function pendingIds(on: App): Promise<string[]> {
  const hours = hourBucketsBetween(new Date(Date.now() - 3_600_000), new Date());
  const rows = (await Promise.all(hours.map((h) => cqlRows(on, 'SELECT purchase_id FROM pending_purchases WHERE hour = ?', [h])))).flat();
  return rows.map((r) => r.purchase_id.toString());
}

async function assertCompleted(on: App, itemId: string, purchaseId: string, tag: string, available: number) {
  const purchase = (await gqlOk(on, PurchaseDocument, { id: purchaseId }, buyer.token)).purchase;
  expect(purchase?.status).toBe('COMPLETED');
  const mine = await gqlOk(on, MyPurchasesDocument, {}, buyer.token);
  expect(mine.myPurchases.edges.filter((e) => e.node.id === purchaseId)).toHaveLength(1);
  const row = await cqlRow(on, 'SELECT TTL(status) AS s, TTL(buyer) AS b, TTL(quantity) AS q FROM purchases WHERE id = ?', [uuid(purchaseId)]);
  expect([row?.s, row?.b, row?.q]).toEqual([null, null, null]);
  const byTag = await gqlOk(on, ItemsByTagDocument, { tag }, buyer.token);
  expect(byTag.itemsByTag.edges[0]?.node).toMatchObject({ id: itemId, availableUnits: available });
  expect(await pendingIds(on)).not.toContain(purchaseId);
}

describe('recovery', () => {
  it('completes a purchase interrupted after the bind when a server starts', async () => {
    const tag = `crash${Date.now().toString(36)}`;
    const item = await createItem(app, seller, { offeredUnits: 5, tags: [tag] });
    const purchaseId = await buyAndCrashAfterBind(app, item.id, 2);

    // Bound (stock taken) but not completed: CREATED, expiring, not in the buyer's history, listings stale.
    expect((await gqlOk(app, ItemDocument, { id: item.id }, buyer.token)).item?.availableUnits).toBe(3);
    expect((await gqlOk(app, MyPurchasesDocument, {}, buyer.token)).myPurchases.edges).toEqual([]);
    expect((await cqlRow(app, 'SELECT TTL(status) AS t FROM purchases WHERE id = ?', [uuid(purchaseId)]))?.t).toBeGreaterThan(0);
    expect((await gqlOk(app, ItemsByTagDocument, { tag }, buyer.token)).itemsByTag.edges[0]?.node.availableUnits).toBe(5);
    expect(await pendingIds(app)).toContain(purchaseId);

    // A new instance completes it as it starts.
    const restarted = await startApp({ env: QUIET });
    await eventually(async () => marketplace(restarted.services).stats.recovered >= 1, { timeoutMs: 30_000, what: 'recovery at start' });
    await assertCompleted(restarted, item.id, purchaseId, tag, 3);

    // Completing again (recovery and request racing, or a second recovery) changes nothing.
    const stored = (await restarted.services.stores.purchases.byId(purchaseId))!;
    await completePurchase(restarted.services, stored);
    await recoverPendingPurchases(restarted.services);
    await assertCompleted(restarted, item.id, purchaseId, tag, 3);
    expect((await gqlOk(app, ItemDocument, { id: item.id }, buyer.token)).item?.availableUnits).toBe(3);
  });

  it('completes it periodically on a running server', async () => {
    const periodic = await startApp({ env: { PURCHASE_RECOVERY_INTERVAL_MS: '300' } });
    const tag = `tick${Date.now().toString(36)}`;
    const item = await createItem(periodic, seller, { offeredUnits: 4, tags: [tag] });
    const stats = marketplace(periodic.services).stats;
    // The run at start is over: whatever completes this purchase is a later, periodic run.
    await eventually(() => stats.recoveryRuns >= 1, { what: 'the first recovery run' });
    const [runsBefore, recoveredBefore] = [stats.recoveryRuns, stats.recovered];
    const purchaseId = await buyAndCrashAfterBind(periodic, item.id, 1, ['CREATED', 'COMPLETED']);
    await eventually(async () => (await gqlOk(periodic, PurchaseDocument, { id: purchaseId }, buyer.token)).purchase?.status === 'COMPLETED', {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'periodic recovery',
    });
    await eventually(async () => !(await pendingIds(periodic)).includes(purchaseId), { timeoutMs: 10_000, what: 'pending entry cleared' });
    await assertCompleted(periodic, item.id, purchaseId, tag, 3);
    expect(stats.recovered).toBe(recoveredBefore + 1);
    expect(stats.recoveryRuns).toBeGreaterThan(runsBefore);
  });

  it('leaves a purchase that never bound to expire, with no trace in listings or history', async () => {
    const tag = `unbound${Date.now().toString(36)}`;
    const item = await createItem(app, seller, { offeredUnits: 5, tags: [tag] });
    const hooks = marketplace(app.services).hooks;
    let purchaseId = '';
    hooks.beforeBind = (id) => {
      hooks.beforeBind = undefined;
      purchaseId = id;
      throw new SimulatedCrash('the process died before the bind');
    };
    expect(codes(await gql(app, BuyItemDocument, { itemId: item.id, quantity: 1 }, buyer.token))).toEqual(['INTERNAL_SERVER_ERROR']);
    expect(purchaseId).not.toBe('');

    // Recovery looks at it and leaves it alone: it is not bound.
    await recoverPendingPurchases(app.services);

    const row = await cqlRow(app, 'SELECT status, TTL(status) AS t FROM purchases WHERE id = ?', [uuid(purchaseId)]);
    expect(row?.status).toBe('CREATED');
    expect(row?.t).toBeGreaterThan(0);
    expect(row?.t).toBeLessThanOrEqual(24 * 3600);
    const pending = await cqlRow(app, 'SELECT TTL(item_id) AS t FROM pending_purchases WHERE hour = ? AND purchase_id = ?', [
      hourBucketsBetween(new Date(uuid(purchaseId).getDate()), new Date(uuid(purchaseId).getDate()))[0],
      uuid(purchaseId),
    ]);
    expect(pending?.t).toBeGreaterThan(0);
    const read = await gqlOk(app, ItemPurchasesDocument, { id: item.id }, seller.token);
    expect(read.item?.purchases.edges).toEqual([]);
    expect((await gqlOk(app, ItemDocument, { id: item.id }, buyer.token)).item?.availableUnits).toBe(5);
    expect((await gqlOk(app, ItemsByTagDocument, { tag }, buyer.token)).itemsByTag.edges[0]?.node.availableUnits).toBe(5);
    const mine = await gqlOk(app, MyPurchasesDocument, {}, buyer.token);
    expect(mine.myPurchases.edges.map((e) => e.node.id)).not.toContain(purchaseId);
  });
});
