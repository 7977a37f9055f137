/**
 * Crash safety: a purchase bound to its item ends COMPLETED even when the
 * request dies between the bind and the completion; one that never bound
 * leaves no trace but its expiring CREATED row.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { hourBucketsBetween } from '../../src/buckets.js';
import { completePurchase, recoverPendingPurchases } from '../../src/resolvers/marketplace/completion.js';
import { BuyItemDocument, ItemDocument, ItemPurchasesDocument, ItemsByTagDocument, MyPurchasesDocument, PurchaseDocument } from '../generated/graphql.js';
import { ManualClock, startApp, stopApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { createItem, cqlRow, cqlRows, uuid } from '../testkit/data/marketplace.js';
import { metricValue } from '../testkit/metrics.js';
import { eventually } from '../testkit/poll.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { hookUntilRemoved, onceHook } from '../testkit/faults/fault-hooks.js';
import { globalIdOf, keyOf } from '../testkit/ids.js';
import { mapOf } from '../../src/db/cassandra/client.js';

// Recovery runs at start and then hourly here, so only the runs a test asks for happen; and with no
// grace period, so it reaches a purchase interrupted a moment ago (the grace has tests of its own).
const QUIET = { PURCHASE_RECOVERY_INTERVAL_MS: String(3_600_000), PURCHASE_RECOVERY_GRACE_MS: '0' };

let app: App;
let seller: TestUser;
let buyer: TestUser;
beforeAll(async () => {
  app = await startApp({ env: QUIET });
  [seller, buyer] = await signUpMany(app, 2, 'crash');
  // Let the run at start finish, so no recovery run overlaps the interruptions below.
  await eventually(() => app.services.marketplace.stats.recoveryRuns >= 1, { what: 'the recovery run at start' });
});

class SimulatedCrash extends Error {}

/**
 * Buys with a request that dies right after the bind; returns the purchase id,
 * checked bound to the item and (unless recovery runs often here) still CREATED.
 */
async function buyAndCrashAfterBind(on: App, itemId: string, quantity: number, expectStatus = ['CREATED']): Promise<string> {
  const hooks = on.services.marketplace.hooks;
  let purchaseId = '';
  onceHook(hooks, 'afterBind', (id) => {
    purchaseId = id;
    throw new SimulatedCrash('the process died after the bind');
  });
  const res = await gql(on, BuyItemDocument, { itemId, quantity }, buyer.token);
  expect(codes(res)).toEqual(['INTERNAL_SERVER_ERROR']);
  const master = await cqlRow(on, 'SELECT purchases FROM items WHERE id = ?', [uuid(itemId)]);
  const map = new Map([...mapOf<number>(master?.purchases)].map(([k, v]) => [String(k), v]));
  expect(map.get(purchaseId)).toBe(quantity);
  const row = await cqlRow(on, 'SELECT status FROM purchases WHERE id = ?', [uuid(purchaseId)]);
  expect(expectStatus).toContain(row?.status);
  return purchaseId;
}

async function pendingIds(on: App): Promise<string[]> {
  const hours = hourBucketsBetween(new Date(Date.now() - 3_600_000), new Date());
  const rows = (await Promise.all(hours.map((h) => cqlRows(on, 'SELECT purchase_id FROM pending_purchases WHERE hour = ?', [h])))).flat();
  return rows.map((r) => r.purchase_id.toString());
}

async function assertCompleted(on: App, itemId: string, purchaseId: string, tag: string, available: number) {
  const purchase = (await gqlOk(on, PurchaseDocument, { purchaseId: purchaseId }, buyer.token)).purchase;
  expect(purchase?.status).toBe('COMPLETED');
  const mine = await gqlOk(on, MyPurchasesDocument, {}, buyer.token);
  expect(mine.myPurchases.edges.filter((e) => keyOf(e.node.id) === purchaseId)).toHaveLength(1);
  // The seller's list of the item's purchases is written by the completion, recovery's included.
  const ofItem = (await gqlOk(on, ItemPurchasesDocument, { itemId: itemId }, seller.token)).item?.purchases.edges ?? [];
  expect(ofItem.filter((e) => keyOf(e.node.id) === purchaseId).map((e) => e.node.status)).toEqual(['COMPLETED']);
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
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(3);
    expect((await gqlOk(app, MyPurchasesDocument, {}, buyer.token)).myPurchases.edges).toEqual([]);
    expect((await cqlRow(app, 'SELECT TTL(status) AS t FROM purchases WHERE id = ?', [uuid(purchaseId)]))?.t).toBeGreaterThan(0);
    expect((await gqlOk(app, ItemsByTagDocument, { tag }, buyer.token)).itemsByTag.edges[0]?.node.availableUnits).toBe(5);
    expect(await pendingIds(app)).toContain(purchaseId);

    // A new instance completes it as it starts.
    const restarted = await startApp({ env: QUIET });
    await eventually(async () => restarted.services.marketplace.stats.recovered >= 1, { timeoutMs: 30_000, what: 'recovery at start' });
    expect(await metricValue(restarted, 'parley_purchases_recovered_total')).toBeGreaterThanOrEqual(1);
    await assertCompleted(restarted, item.id, purchaseId, tag, 3);

    // Completing again (recovery and request racing, or a second recovery) changes nothing.
    const stored = (await restarted.services.stores.purchases.byId(purchaseId))!;
    await completePurchase(restarted.services, stored);
    await recoverPendingPurchases(restarted.services);
    await assertCompleted(restarted, item.id, purchaseId, tag, 3);
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(3);
  });

  it('completes it periodically on a running server', async () => {
    const periodic = await startApp({ env: { PURCHASE_RECOVERY_INTERVAL_MS: '300', PURCHASE_RECOVERY_GRACE_MS: '0' } });
    const tag = `tick${Date.now().toString(36)}`;
    const item = await createItem(periodic, seller, { offeredUnits: 4, tags: [tag] });
    const stats = periodic.services.marketplace.stats;
    // The run at start is over: whatever completes this purchase is a later, periodic run.
    await eventually(() => stats.recoveryRuns >= 1, { what: 'the first recovery run' });
    const [runsBefore, recoveredBefore] = [stats.recoveryRuns, stats.recovered];
    const purchaseId = await buyAndCrashAfterBind(periodic, item.id, 1, ['CREATED', 'COMPLETED']);
    await eventually(async () => (await gqlOk(periodic, PurchaseDocument, { purchaseId: purchaseId }, buyer.token)).purchase?.status === 'COMPLETED', {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'periodic recovery',
    });
    await eventually(async () => !(await pendingIds(periodic)).includes(purchaseId), { timeoutMs: 10_000, what: 'pending entry cleared' });
    await assertCompleted(periodic, item.id, purchaseId, tag, 3);
    expect(stats.recovered).toBe(recoveredBefore + 1);
    expect(stats.recoveryRuns).toBeGreaterThan(runsBefore);
    // Its runs would otherwise reach into the tests below.
    await stopApp(periodic);
  });

  it('answers with the bound purchase, CREATED, when its completion fails, and recovery completes it', async () => {
    const tag = `incomplete${Date.now().toString(36)}`;
    const item = await createItem(app, seller, { offeredUnits: 5, tags: [tag] });
    const hooks = app.services.marketplace.hooks;
    onceHook(hooks, 'beforeCompletion', () => {
      throw new Error('write timeout while completing');
    });
    const res = await gql(app, BuyItemDocument, { itemId: item.id, quantity: 2 }, buyer.token);
    // Not an error: the units are the buyer's, and a retry must not look necessary.
    expect(res.errors).toBeUndefined();
    const purchase = res.data!.buyItem;
    expect(purchase).toMatchObject({ status: 'CREATED', quantity: 2, buyer: { login: buyer.login }, item: { id: item.id } });
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(3);
    expect(await pendingIds(app)).toContain(keyOf(purchase.id));

    await recoverPendingPurchases(app.services);
    await assertCompleted(app, item.id, keyOf(purchase.id), tag, 3);
  });

  it('leaves a purchase that never bound to expire, with no trace in listings or history', async () => {
    const tag = `unbound${Date.now().toString(36)}`;
    const item = await createItem(app, seller, { offeredUnits: 5, tags: [tag] });
    const hooks = app.services.marketplace.hooks;
    let purchaseId = '';
    onceHook(hooks, 'beforeBind', (id) => {
      purchaseId = id;
      throw new SimulatedCrash('the process died before the bind');
    });
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
    const read = await gqlOk(app, ItemPurchasesDocument, { itemId: item.id }, seller.token);
    expect(read.item?.purchases.edges).toEqual([]);
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(5);
    expect((await gqlOk(app, ItemsByTagDocument, { tag }, buyer.token)).itemsByTag.edges[0]?.node.availableUnits).toBe(5);
    const mine = await gqlOk(app, MyPurchasesDocument, {}, buyer.token);
    expect(mine.myPurchases.edges.map((e) => keyOf(e.node.id))).not.toContain(purchaseId);
  });
});

describe('recovery runs', () => {
  it('completes purchases in the other hours when one hour of pending purchases cannot be read', async () => {
    const now = Date.now();
    const clock = new ManualClock(new Date(now - 3 * 3_600_000));
    const clocked = await startApp({ clock, env: QUIET });
    const runtime = clocked.services.marketplace;
    await eventually(() => runtime.stats.recoveryRuns >= 1, { what: 'the recovery run at start' });
    const item = await createItem(clocked, seller, { offeredUnits: 5 }, clock.now());
    // Two purchases interrupted after their bind, three hours apart: two hour partitions.
    const early = await buyAndCrashAfterBind(clocked, item.id, 1);
    const earlyHour = hourBucketsBetween(new Date(uuid(early).getDate()), new Date(uuid(early).getDate()))[0];
    clock.set(new Date(now));
    const late = await buyAndCrashAfterBind(clocked, item.id, 2);

    // The older hour fails (say, too many tombstones in a busy hour); it is read first.
    const stopFailing = hookUntilRemoved(runtime.hooks, 'beforeRecoveryHour', (hour) => {
      if (hour === earlyHour) throw new Error('TombstoneOverwhelmingException');
    });
    const failuresBefore = runtime.stats.recoveryHourFailures;
    await recoverPendingPurchases(clocked.services);
    expect(runtime.stats.recoveryHourFailures).toBe(failuresBefore + 1);
    const status = async (id: string) => (await gqlOk(clocked, PurchaseDocument, { purchaseId: id }, buyer.token)).purchase?.status;
    expect(await status(late)).toBe('COMPLETED');
    expect(await status(early)).toBe('CREATED');

    // The next run reads that hour again.
    stopFailing();
    await recoverPendingPurchases(clocked.services);
    expect(await status(early)).toBe('COMPLETED');
    expect((await gqlOk(clocked, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(2);
    await stopApp(clocked);
  });

  it('leaves a purchase still in flight to its request until the grace period is over', async () => {
    const clock = new ManualClock(new Date());
    // The default grace period (2 minutes), against a clock the test moves.
    const clocked = await startApp({ clock, env: { PURCHASE_RECOVERY_INTERVAL_MS: String(3_600_000) } });
    const runtime = clocked.services.marketplace;
    await eventually(() => runtime.stats.recoveryRuns >= 1, { what: 'the recovery run at start' });
    expect(clocked.services.config.marketplace.recoveryGraceMs).toBe(120_000);
    const item = await createItem(clocked, seller, { offeredUnits: 5 }, clock.now());

    // A request that has bound its purchase and is about to complete it (held here).
    let bound!: (id: string) => void;
    const boundId = new Promise<string>((resolve) => (bound = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    onceHook(runtime.hooks, 'afterBind', async (id) => {
      bound(id);
      await held;
    });
    const request = gql(clocked, BuyItemDocument, { itemId: item.id, quantity: 1 }, buyer.token);
    const purchaseId = await boundId;
    const serialReads = vi.spyOn(clocked.services.stores.items, 'readBoundSerial');
    try {
      // A run a minute later does not touch it: no SERIAL read of its item, no completion.
      clock.advance(60_000);
      await recoverPendingPurchases(clocked.services);
      expect(serialReads.mock.calls.filter(([, id]) => id === purchaseId)).toEqual([]);
      expect(await pendingIds(clocked)).toContain(purchaseId);
      expect((await cqlRow(clocked, 'SELECT status FROM purchases WHERE id = ?', [uuid(purchaseId)]))?.status).toBe('CREATED');

      // Past the grace period the request is presumed dead: recovery completes the purchase.
      clock.advance(61_000);
      await recoverPendingPurchases(clocked.services);
      expect(serialReads.mock.calls.filter(([, id]) => id === purchaseId)).toHaveLength(1);
      expect((await cqlRow(clocked, 'SELECT status FROM purchases WHERE id = ?', [uuid(purchaseId)]))?.status).toBe('COMPLETED');
    } finally {
      serialReads.mockRestore();
      // Resumed even if an assertion above failed, so the held request does not outlive the app.
      release();
    }

    // The request, resumed, completes it again (idempotent) and answers with it.
    const res = await request;
    expect(res.errors).toBeUndefined();
    expect(res.data?.buyItem).toMatchObject({ id: globalIdOf('Purchase', purchaseId), status: 'COMPLETED' });
    expect((await gqlOk(clocked, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(4);
    await stopApp(clocked);
  });

  it('forgets a purchase that never bound once no request can bind it any more', async () => {
    const clock = new ManualClock(new Date());
    const clocked = await startApp({ clock, env: QUIET });
    const runtime = clocked.services.marketplace;
    await eventually(() => runtime.stats.recoveryRuns >= 1, { what: 'the recovery run at start' });
    const item = await createItem(clocked, seller, { offeredUnits: 5 }, clock.now());
    let purchaseId = '';
    onceHook(runtime.hooks, 'beforeBind', (id) => {
      purchaseId = id;
      throw new SimulatedCrash('the process died before the bind');
    });
    expect(codes(await gql(clocked, BuyItemDocument, { itemId: item.id, quantity: 1 }, buyer.token))).toEqual(['INTERNAL_SERVER_ERROR']);

    // A minute on, its request could in principle still bind it: recovery keeps looking.
    clock.advance(60_000);
    await recoverPendingPurchases(clocked.services);
    expect(await pendingIds(clocked)).toContain(purchaseId);

    // Past four bind deadlines (2 minutes) "not bound" is final: the entry goes, the CREATED row expires by itself.
    clock.advance(61_000);
    await recoverPendingPurchases(clocked.services);
    expect(await pendingIds(clocked)).not.toContain(purchaseId);
    const row = await cqlRow(clocked, 'SELECT status, TTL(status) AS t FROM purchases WHERE id = ?', [uuid(purchaseId)]);
    expect(row?.status).toBe('CREATED');
    expect(row?.t).toBeGreaterThan(0);

    // So later runs spend no SERIAL read on it.
    const serialReads = vi.spyOn(clocked.services.stores.items, 'readBoundSerial');
    try {
      await recoverPendingPurchases(clocked.services);
      expect(serialReads.mock.calls.filter(([, id]) => id === purchaseId)).toEqual([]);
    } finally {
      serialReads.mockRestore();
    }
    expect((await gqlOk(clocked, ItemDocument, { itemId: item.id }, buyer.token)).item?.availableUnits).toBe(5);
    await stopApp(clocked);
  });
});

