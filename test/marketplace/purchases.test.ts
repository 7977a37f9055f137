// Buying items: stock, purchases and their completion, over HTTP against the real node.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { schema } from '../../src/schema/index.js';
import { hourBucketsBetween } from '../../src/buckets.js';
import {
  BuyItemDocument,
  ItemDocument,
  ItemPurchasesDocument,
  ItemsBySellerDocument,
  ItemsByTagDocument,
  MyPurchasesDocument,
  PurchaseDocument,
} from '../generated/graphql.js';
import { ManualClock, startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { createItem, cqlRow, cqlRows, uuid } from '../testkit/data/marketplace.js';
import { recordCql } from '../testkit/faults/cql-spy.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { onceHook } from '../testkit/faults/fault-hooks.js';

let app: App;
let seller: TestUser;
let buyer: TestUser;
let other: TestUser;
beforeAll(async () => {
  app = await startApp();
  [seller, buyer, other] = await signUpMany(app, 3, 'shop');
});

describe('buyItem', () => {
  it('completes a purchase and shows it to its buyer and seller only', async () => {
    const tag = `buy${Date.now().toString(36)}`;
    const item = await createItem(app, seller, { offeredUnits: 5, unitPrice: '19.99', tags: [tag] });
    const { buyItem } = await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 2 }, buyer.token);
    expect(buyItem).toMatchObject({
      status: 'COMPLETED',
      quantity: 2,
      unitPrice: '19.99',
      buyer: { login: buyer.login },
      item: { id: item.id },
    });

    const after = await gqlOk(app, ItemDocument, { itemId: item.id }, other.token);
    expect(after.item).toMatchObject({ availableUnits: 3, auctionFinished: false });

    const mine = await gqlOk(app, MyPurchasesDocument, {}, buyer.token);
    expect(mine.myPurchases.edges.map((e) => e.node)).toEqual([buyItem]);
    expect((await gqlOk(app, MyPurchasesDocument, {}, other.token)).myPurchases.edges).toEqual([]);

    expect((await gqlOk(app, PurchaseDocument, { purchaseId: buyItem.id }, buyer.token)).purchase).toEqual(buyItem);
    expect((await gqlOk(app, PurchaseDocument, { purchaseId: buyItem.id }, seller.token)).purchase).toEqual(buyItem);
    expect(codes(await gql(app, PurchaseDocument, { purchaseId: buyItem.id }, other.token))).toEqual(['FORBIDDEN']);

    const bySeller = await gqlOk(app, ItemPurchasesDocument, { itemId: item.id }, seller.token);
    expect(bySeller.item?.purchases.edges.map((e) => e.node)).toEqual([buyItem]);
    expect(codes(await gql(app, ItemPurchasesDocument, { itemId: item.id }, buyer.token))).toEqual(['FORBIDDEN']);
  });

  it('makes the completed purchase permanent and refreshes the listings, keeping their TTL', async () => {
    const tag = `ttl${Date.now().toString(36)}`;
    const item = await createItem(app, seller, { offeredUnits: 4, tags: [tag] });
    const id = uuid(item.id);
    const ttlBefore = await cqlRow(app, 'SELECT TTL(available_units) AS t FROM items_by_seller WHERE seller = ? AND item_id = ?', [
      seller.login,
      id,
    ]);
    const { buyItem: p1 } = await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 1 }, buyer.token);
    await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 3 }, other.token);

    // Every column of the completed purchase is without TTL (an INSERT leaves it on columns it does not rewrite).
    const purchase = await cqlRow(
      app,
      `SELECT status, TTL(item_id) AS a, TTL(buyer) AS b, TTL(seller) AS c, TTL(unit_price) AS d, TTL(quantity) AS e,
              TTL(status) AS f, TTL(created_at) AS g FROM purchases WHERE id = ?`,
      [uuid(p1.id)],
    );
    expect(purchase?.status).toBe('COMPLETED');
    expect([purchase?.a, purchase?.b, purchase?.c, purchase?.d, purchase?.e, purchase?.f, purchase?.g]).toEqual(Array(7).fill(null));
    const history = await cqlRow(app, 'SELECT TTL(quantity) AS t FROM purchases_by_buyer WHERE buyer = ? AND purchase_id = ?', [
      buyer.login,
      uuid(p1.id),
    ]);
    expect(history).toBeDefined();
    expect(history?.t).toBeNull();

    // Listings show the new stock and still expire, no later than they would have.
    const bySeller = await gqlOk(app, ItemsBySellerDocument, { login: seller.login, first: 5 }, other.token);
    expect(bySeller.itemsBySeller.edges.find((e) => e.node.id === item.id)?.node).toMatchObject({ availableUnits: 0, auctionFinished: true });
    const byTag = await gqlOk(app, ItemsByTagDocument, { tag }, other.token);
    expect(byTag.itemsByTag.edges[0]?.node).toMatchObject({ id: item.id, availableUnits: 0, auctionFinished: true });
    const sellerTtl = await cqlRow(
      app,
      'SELECT TTL(available_units) AS t, TTL(auction_finished) AS f, TTL(name) AS n FROM items_by_seller WHERE seller = ? AND item_id = ?',
      [seller.login, id],
    );
    const tagTtl = await cqlRow(app, 'SELECT TTL(available_units) AS t, TTL(auction_finished) AS f FROM items_by_tag WHERE tag = ? AND item_id = ?', [
      tag,
      id,
    ]);
    for (const ttl of [sellerTtl?.t, sellerTtl?.f, tagTtl?.t, tagTtl?.f]) {
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(ttlBefore?.t);
    }
    // The refreshed cells expire with the rest of the row, not 30 days after the purchase.
    expect(Math.abs(sellerTtl?.t - sellerTtl?.n)).toBeLessThanOrEqual(2);
    const month = Number(new Date().toISOString().slice(0, 7).replace('-', ''));
    const sellerHistory = await cqlRow(
      app,
      'SELECT available_units, auction_finished, TTL(available_units) AS t FROM seller_item_history WHERE seller = ? AND year_month = ? AND item_id = ?',
      [seller.login, month, id],
    );
    expect(sellerHistory).toMatchObject({ available_units: 0, auction_finished: true, t: null });

    // Nothing is left for recovery.
    expect(await pendingFor(app, item.id)).toEqual([]);
  });

  it('refreshes a listing with the TTL it has left and never brings back one that expired', async () => {
    const [tagKept, tagGone] = [`kept${Date.now().toString(36)}`, `gone${Date.now().toString(36)}`];
    const item = await createItem(app, seller, { offeredUnits: 5, tags: [tagKept, tagGone] });
    const id = uuid(item.id);
    // Age the listings as if they were written long ago: the seller listing has 5000 s left and the
    // gone-tag listing has expired. Listing writes are ordered by a timestamp derived from the item's
    // listing_ts, so move that base past "now" and write the aged rows at it.
    const base = Date.now() * 1000 + 1_000_000;
    await cqlRow(app, 'UPDATE items SET listing_ts = ? WHERE id = ?', [base, id]);
    await cqlRow(
      app,
      'UPDATE items_by_seller USING TTL 5000 AND TIMESTAMP ? SET name = ?, available_units = 5, auction_finished = false WHERE seller = ? AND item_id = ?',
      [base, item.name, seller.login, id],
    );
    await cqlRow(app, 'DELETE FROM items_by_tag USING TIMESTAMP ? WHERE tag = ? AND item_id = ?', [base, tagGone, id]);

    await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 2 }, buyer.token);

    const listing = await cqlRow(
      app,
      'SELECT available_units, TTL(available_units) AS t, TTL(auction_finished) AS f FROM items_by_seller WHERE seller = ? AND item_id = ?',
      [seller.login, id],
    );
    expect(listing?.available_units).toBe(3);
    expect(listing?.t).toBeGreaterThan(0);
    expect(listing?.t).toBeLessThanOrEqual(5000);
    expect(listing?.f).toBeLessThanOrEqual(5000);
    expect(await cqlRow(app, 'SELECT available_units FROM items_by_tag WHERE tag = ? AND item_id = ?', [tagGone, id])).toBeUndefined();
    expect((await gqlOk(app, ItemsByTagDocument, { tag: tagGone }, other.token)).itemsByTag.edges).toEqual([]);
    expect((await gqlOk(app, ItemsByTagDocument, { tag: tagKept }, other.token)).itemsByTag.edges[0]?.node.availableUnits).toBe(3);
  });

  it('pages the seller’s view of purchases and the buyer’s history newest first', async () => {
    const item = await createItem(app, seller, { offeredUnits: 10 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 1 }, other.token)).buyItem.id);
    const page1 = await gqlOk(app, ItemPurchasesDocument, { itemId: item.id, first: 2 }, seller.token);
    expect(page1.item?.purchases.edges.map((e) => e.node.id)).toEqual([ids[2], ids[1]]);
    expect(page1.item?.purchases.pageInfo.hasNextPage).toBe(true);
    const page2 = await gqlOk(app, ItemPurchasesDocument, { itemId: item.id, first: 2, after: page1.item?.purchases.pageInfo.endCursor }, seller.token);
    expect(page2.item?.purchases.edges.map((e) => e.node.id)).toEqual([ids[0]]);
    expect(page2.item?.purchases.pageInfo.hasNextPage).toBe(false);

    const mine1 = await gqlOk(app, MyPurchasesDocument, { first: 2 }, other.token);
    expect(mine1.myPurchases.edges.map((e) => e.node.id).slice(0, 2)).toEqual([ids[2], ids[1]]);
    const mine2 = await gqlOk(app, MyPurchasesDocument, { first: 1, after: mine1.myPurchases.pageInfo.endCursor }, other.token);
    expect(mine2.myPurchases.edges.map((e) => e.node.id)).toEqual([ids[0]]);
  });

  it('pages an item’s purchases from one slice of purchases_by_item, never reading the whole purchases map', async () => {
    const item = await createItem(app, seller, { offeredUnits: 50 });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const who = [buyer, other][i % 2]!;
      ids.push((await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: (i % 3) + 1 }, who.token)).buyItem.id);
    }
    const spy = recordCql(app);
    const seen: string[] = [];
    let after: string | null | undefined;
    const pages: number[] = [];
    do {
      const page = (await gqlOk(app, ItemPurchasesDocument, { itemId: item.id, first: 5, after }, seller.token)).item!.purchases;
      pages.push(page.edges.length);
      seen.push(...page.edges.map((e) => e.node.id));
      for (const e of page.edges) expect(e.node).toMatchObject({ status: 'COMPLETED', unitPrice: '19.99', item: { id: item.id } });
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : undefined;
    } while (after);
    spy.stop();
    expect(pages).toEqual([5, 5, 2]);
    expect(seen).toEqual([...ids].reverse());
    const statements = spy.statements();
    expect(statements.filter((c) => /SELECT purchases FROM items/i.test(c))).toEqual([]);
    expect(statements.filter((c) => /FROM purchases_by_item WHERE item_id = \?.* LIMIT \?/.test(c))).toHaveLength(3);
    const total = (await gqlOk(app, ItemPurchasesDocument, { itemId: item.id, first: 200 }, seller.token)).item!.purchases.edges;
    expect(total.map((e) => e.node.quantity).reduce((a, b) => a + b, 0)).toBe(50 - (await gqlOk(app, ItemDocument, { itemId: item.id }, seller.token)).item!.availableUnits);
  });
});

describe('buyItem errors', () => {
  it('BAD_USER_INPUT for a quantity below 1 or a malformed id', async () => {
    const item = await createItem(app, seller);
    for (const quantity of [0, -1]) {
      const res = await gql(app, BuyItemDocument, { itemId: item.id, quantity }, buyer.token);
      expect(codes(res)).toEqual(['BAD_USER_INPUT']);
      expect(res.errors?.[0]?.extensions?.field).toBe('quantity');
    }
    const bad = await gql(app, BuyItemDocument, { itemId: 'nope', quantity: 1 }, buyer.token);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'itemId' });
  });

  it('NOT_FOUND for an unknown item', async () => {
    const res = await gql(app, BuyItemDocument, { itemId: '6f1c2b40-e65b-11f1-b990-0200581be2e0', quantity: 1 }, buyer.token);
    expect(codes(res)).toEqual(['NOT_FOUND']);
  });

  it('FORBIDDEN for the seller', async () => {
    const item = await createItem(app, seller);
    expect(codes(await gql(app, BuyItemDocument, { itemId: item.id, quantity: 1 }, seller.token))).toEqual(['FORBIDDEN']);
  });

  it('NOT_ENOUGH_UNITS for more than is left, and once sold out', async () => {
    const item = await createItem(app, seller, { offeredUnits: 3 });
    const tooMany = await gql(app, BuyItemDocument, { itemId: item.id, quantity: 4 }, buyer.token);
    expect(codes(tooMany)).toEqual(['NOT_ENOUGH_UNITS']);
    expect(tooMany.errors?.[0]?.extensions?.availableUnits).toBe(3);
    await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 3 }, buyer.token);
    const soldOut = await gql(app, BuyItemDocument, { itemId: item.id, quantity: 1 }, other.token);
    expect(codes(soldOut)).toEqual(['NOT_ENOUGH_UNITS']);
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, other.token)).item).toMatchObject({ availableUnits: 0, auctionFinished: true });
  });

  it('AUCTION_FINISHED before the start and after the end date', async () => {
    const clock = new ManualClock(new Date('2026-05-01T12:00:00Z'));
    const timed = await startApp({ clock });
    const [s, b] = await signUpMany(timed, 2, 'timed');
    const item = await createItem(
      timed,
      s!,
      { startDate: '2026-05-02T00:00:00Z', endDate: '2026-05-03T00:00:00Z', offeredUnits: 5 },
      clock.now(),
    );
    expect(codes(await gql(timed, BuyItemDocument, { itemId: item.id, quantity: 1 }, b!.token))).toEqual(['AUCTION_FINISHED']);
    clock.set('2026-05-02T10:00:00Z');
    expect((await gqlOk(timed, BuyItemDocument, { itemId: item.id, quantity: 1 }, b!.token)).buyItem.status).toBe('COMPLETED');
    clock.set('2026-05-03T00:00:00Z');
    expect(codes(await gql(timed, BuyItemDocument, { itemId: item.id, quantity: 1 }, b!.token))).toEqual(['AUCTION_FINISHED']);
    const read = await gqlOk(timed, ItemDocument, { itemId: item.id }, b!.token);
    expect(read.item).toMatchObject({ availableUnits: 4, auctionFinished: true });
  });

  it('a sold-out item is NOT_ENOUGH_UNITS during its sale (not AUCTION_FINISHED) and AUCTION_FINISHED after it', async () => {
    const clock = new ManualClock(new Date('2026-06-01T12:00:00Z'));
    const timed = await startApp({ clock });
    const [s, b, c] = await signUpMany(timed, 3, 'soldout');
    const item = await createItem(timed, s!, { endDate: '2026-06-02T00:00:00Z', offeredUnits: 2 }, clock.now());
    await gqlOk(timed, BuyItemDocument, { itemId: item.id, quantity: 2 }, b!.token);
    expect((await gqlOk(timed, ItemDocument, { itemId: item.id }, c!.token)).item).toMatchObject({ availableUnits: 0, auctionFinished: true });
    const during = await gql(timed, BuyItemDocument, { itemId: item.id, quantity: 1 }, c!.token);
    expect(codes(during)).toEqual(['NOT_ENOUGH_UNITS']);
    expect(during.errors?.[0]?.extensions?.availableUnits).toBe(0);
    clock.set('2026-06-02T00:00:00Z');
    expect(codes(await gql(timed, BuyItemDocument, { itemId: item.id, quantity: 1 }, c!.token))).toEqual(['AUCTION_FINISHED']);
  });

  it('documents when each of its error codes is returned', () => {
    const doc = schema.getMutationType()!.getFields().buyItem!.description ?? '';
    const rule = (code: string) => doc.split('\n').find((line) => line.includes(`${code}:`)) ?? '';
    expect(rule('BAD_USER_INPUT')).toMatch(/quantity.*itemId.*clientPurchaseId/);
    expect(rule('NOT_FOUND')).toMatch(/no item/i);
    expect(rule('AUCTION_FINISHED')).toMatch(/before.*startDate.*endDate/);
    expect(rule('FORBIDDEN')).toMatch(/seller/);
    expect(rule('NOT_ENOUGH_UNITS')).toMatch(/sold.out/);
    expect(rule('CONFLICT')).toMatch(/PURCHASE_BIND_ATTEMPTS/);
    // In the order they are checked.
    const order = ['UNAUTHENTICATED', 'BAD_USER_INPUT', 'NOT_FOUND', 'AUCTION_FINISHED', 'FORBIDDEN', 'NOT_ENOUGH_UNITS', 'CONFLICT'];
    expect(order.map((code) => doc.indexOf(`${code}:`))).toEqual(order.map((code) => doc.indexOf(`${code}:`)).sort((x, y) => x - y));
    expect(order.every((code) => doc.includes(`${code}:`))).toBe(true);
  });

  it('retries a lost race, and gives up with CONFLICT only at the bound', async () => {
    // One attempt allowed: a rival purchase slipped in between our read and our bind. On another instance: one
    // instance's binds on an item start from the stock its last bind left, so only another's can beat them.
    const [strict, elsewhere] = await Promise.all([startApp({ env: { PURCHASE_BIND_ATTEMPTS: '1' } }), startApp()]);
    const [s, b, rival] = await signUpMany(strict, 3, 'race');
    const item = await createItem(strict, s!, { offeredUnits: 10 });
    const runtime = strict.services.marketplace;
    onceHook(runtime.hooks, 'beforeBind', async () => {
      await gqlOk(elsewhere, BuyItemDocument, { itemId: item.id, quantity: 1 }, rival!.token);
    });
    const lost = await gql(strict, BuyItemDocument, { itemId: item.id, quantity: 2 }, b!.token);
    expect(codes(lost)).toEqual(['CONFLICT']);
    expect(runtime.stats.bindConflicts).toBe(1);
    expect((await gqlOk(strict, ItemDocument, { itemId: item.id }, b!.token)).item?.availableUnits).toBe(9);
    expect((await gqlOk(strict, MyPurchasesDocument, {}, b!.token)).myPurchases.edges).toEqual([]);
    // The abandoned purchase left no pending entry behind; its CREATED row expires by itself.
    expect(await pendingFor(strict, item.id)).toEqual([]);
    const abandoned = await cqlRows(strict, 'SELECT status, TTL(status) AS t FROM purchases WHERE item_id = ? AND buyer = ? ALLOW FILTERING', [
      uuid(item.id),
      b!.login,
    ]);
    expect(abandoned).toHaveLength(1);
    expect(abandoned[0]?.status).toBe('CREATED');
    expect(abandoned[0]?.t).toBeGreaterThan(0);

    // The default bound retries: the same race now ends in a completed purchase.
    const retriesBefore = app.services.marketplace.stats.bindRetries;
    const item2 = await createItem(app, seller, { offeredUnits: 10 });
    onceHook(app.services.marketplace.hooks, 'beforeBind', async () => {
      await gqlOk(elsewhere, BuyItemDocument, { itemId: item2.id, quantity: 1 }, other.token);
    });
    const won = await gqlOk(app, BuyItemDocument, { itemId: item2.id, quantity: 2 }, buyer.token);
    expect(won.buyItem.status).toBe('COMPLETED');
    expect(app.services.marketplace.stats.bindRetries).toBe(retriesBefore + 1);
    expect((await gqlOk(app, ItemDocument, { itemId: item2.id }, buyer.token)).item?.availableUnits).toBe(7);
  });
});

/** Pending entries of an item created in the last hour or so. */
async function pendingFor(on: App, itemId: string): Promise<string[]> {
  const hours = hourBucketsBetween(new Date(Date.now() - 3_600_000), new Date());
  const rows = (await Promise.all(hours.map((h) => cqlRows(on, 'SELECT purchase_id, item_id FROM pending_purchases WHERE hour = ?', [h])))).flat();
  return rows.filter((r) => r.item_id.toString() === itemId).map((r) => r.purchase_id.toString());
}
