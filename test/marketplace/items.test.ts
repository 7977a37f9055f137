// Items and listings by seller and tag, over HTTP against the real node.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import {
  BuyItemDocument,
  CreateItemDocument,
  ItemDocument,
  ItemHistoryDocument,
  ItemsBySellerDocument,
  ItemsByTagDocument,
  PurchaseDocument,
} from '../generated/graphql.js';
import { ManualClock, startApp } from '../testkit/app.js';
import { stringParamsSentDuring } from '../testkit/faults/cql-spy.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { createItem, cqlRow, itemInput, uuid } from '../testkit/data/marketplace.js';
import { signUp, type TestUser } from '../testkit/data/users.js';

const DAY = 24 * 3600;

let app: App;
let seller: TestUser;
let viewer: TestUser;
beforeAll(async () => {
  app = await startApp();
  [seller, viewer] = await Promise.all([signUp(app), signUp(app)]);
});

describe('createItem and item', () => {
  it('stores every field, the price exactly, and tags lower-case without duplicates', async () => {
    const created = await createItem(app, seller, {
      name: '  Oak table ',
      description: 'Solid oak',
      unitPrice: '19.99',
      offeredUnits: 3,
      tags: ['Furniture', 'OAK', 'oak ', 'home'],
    });
    expect(created).toMatchObject({
      name: 'Oak table',
      description: 'Solid oak',
      unitPrice: '19.99',
      offeredUnits: 3,
      availableUnits: 3,
      tags: ['furniture', 'home', 'oak'],
      auctionFinished: false,
      seller: { login: seller.login },
    });
    const read = await gqlOk(app, ItemDocument, { itemId: created.id }, viewer.token);
    expect(read.item).toEqual(created);
    // Cassandra holds a decimal, not a float: 19.99 is stored as exactly 1999 × 10^-2.
    const row = await cqlRow(app, 'SELECT unit_price FROM items WHERE id = ?', [uuid(created.id)]);
    expect(row?.unit_price.toString()).toBe('19.99');
  });

  it.each(['0.01', '19.90', '7', '999999999999.99'])('keeps the price %s exactly', async (price) => {
    const created = await createItem(app, seller, { unitPrice: price });
    expect((await gqlOk(app, ItemDocument, { itemId: created.id }, viewer.token)).item?.unitPrice).toBe(price);
  });

  it('returns null for an unknown item and BAD_USER_INPUT for a malformed id', async () => {
    const unknown = await gqlOk(app, ItemDocument, { itemId: '6f1c2b40-e65b-11f1-b990-0200581be2e0' }, viewer.token);
    expect(unknown.item).toBeNull();
    const bad = await gql(app, ItemDocument, { itemId: 'not-an-id' }, viewer.token);
    expect(codes(bad)).toEqual(['BAD_USER_INPUT']);
    expect(bad.errors?.[0]?.extensions?.field).toBe('itemId');
  });

  it('requires a session', async () => {
    expect(codes(await gql(app, CreateItemDocument, { input: itemInput() }))).toEqual(['UNAUTHENTICATED']);
    expect(codes(await gql(app, ItemsBySellerDocument, { login: seller.login }))).toEqual(['UNAUTHENTICATED']);
  });
});

describe('createItem BAD_USER_INPUT', () => {
  const now = Date.now();
  it.each([
    ['input.name', { name: '   ' }],
    ['input.name', { name: 'n'.repeat(201) }],
    ['input.description', { description: 'd'.repeat(5001) }],
    ['input.unitPrice', { unitPrice: 'abc' }],
    ['input.unitPrice', { unitPrice: '1.999' }],
    ['input.unitPrice', { unitPrice: '0' }],
    ['input.unitPrice', { unitPrice: '0.00' }],
    ['input.unitPrice', { unitPrice: '-1' }],
    ['input.unitPrice', { unitPrice: '1e3' }],
    ['input.unitPrice', { unitPrice: '1234567890123' }],
    ['input.offeredUnits', { offeredUnits: 0 }],
    ['input.offeredUnits', { offeredUnits: 1_000_001 }],
    ['input.endDate', { startDate: new Date(now).toISOString(), endDate: new Date(now).toISOString() }],
    ['input.endDate', { startDate: new Date(now - 2 * DAY * 1000).toISOString(), endDate: new Date(now - DAY * 1000).toISOString() }],
    ['input.tags', { tags: Array.from({ length: 11 }, (_, i) => `tag${i}`) }],
    ['input.tags', { tags: ['t'.repeat(41)] }],
    ['input.tags', { tags: ['ok', '  '] }],
  ])('names %s', async (field, patch) => {
    const res = await gql(app, CreateItemDocument, { input: itemInput(patch) }, seller.token);
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
    expect(res.errors?.[0]?.extensions?.field).toBe(field);
  });

  it('accepts the limits themselves', async () => {
    const item = await createItem(app, seller, {
      name: 'n'.repeat(200),
      description: 'd'.repeat(5000),
      offeredUnits: 1_000_000,
      tags: Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(40, 'x')),
    });
    expect(item.offeredUnits).toBe(1_000_000);
    expect(item.tags).toHaveLength(10);
  });

  it('refuses a price sent as a JSON number (a float)', async () => {
    const res = await gql(app, CreateItemDocument, { input: { ...itemInput(), unitPrice: 19.99 as unknown as string } }, seller.token);
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
    expect(res.errors?.[0]?.message).toMatch(/Decimal must be a string/);
  });
});

describe('listings', () => {
  it('lists a seller’s items newest first, page by page', async () => {
    const own = await signUp(app);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createItem(app, own, { name: `Item ${i}` })).id);
    const first = await gqlOk(app, ItemsBySellerDocument, { login: own.login, first: 3 }, viewer.token);
    expect(first.itemsBySeller.edges.map((e) => e.node.id)).toEqual(ids.slice(2).reverse());
    expect(first.itemsBySeller.pageInfo.hasNextPage).toBe(true);
    const second = await gqlOk(
      app,
      ItemsBySellerDocument,
      { login: own.login.toUpperCase(), first: 3, after: first.itemsBySeller.pageInfo.endCursor },
      viewer.token,
    );
    expect(second.itemsBySeller.edges.map((e) => e.node.id)).toEqual(ids.slice(0, 2).reverse());
    expect(second.itemsBySeller.pageInfo.hasNextPage).toBe(false);
    // Listing rows do not carry the description; it is loaded from the master row.
    expect(second.itemsBySeller.edges[0]?.node.description).toBe('Brass, works');
  });

  it('lists items by tag, case-insensitively, newest first', async () => {
    const tag = `lamp${Date.now().toString(36)}`;
    const a = await createItem(app, seller, { tags: [tag.toUpperCase(), 'other'] });
    const b = await createItem(app, seller, { tags: [tag] });
    const res = await gqlOk(app, ItemsByTagDocument, { tag: ` ${tag.toUpperCase()} ` }, viewer.token);
    expect(res.itemsByTag.edges.map((e) => e.node.id)).toEqual([b.id, a.id]);
    expect(res.itemsByTag.edges[1]?.node).toMatchObject({ unitPrice: '19.99', availableUnits: 10, tags: [tag, 'other'] });
  });

  it('writes seller and tag listings with a 30-day TTL and the seller history without one', async () => {
    const item = await createItem(app, seller, { tags: ['ttl-check'] });
    const id = uuid(item.id);
    const bySeller = await cqlRow(app, 'SELECT TTL(available_units) AS t, TTL(name) AS n FROM items_by_seller WHERE seller = ? AND item_id = ?', [
      seller.login,
      id,
    ]);
    const byTag = await cqlRow(app, 'SELECT TTL(available_units) AS t FROM items_by_tag WHERE tag = ? AND item_id = ?', ['ttl-check', id]);
    expect(bySeller?.t).toBeGreaterThan(30 * DAY - 600);
    expect(bySeller?.t).toBeLessThanOrEqual(30 * DAY);
    expect(bySeller?.n).toBeGreaterThan(30 * DAY - 600);
    expect(byTag?.t).toBeGreaterThan(30 * DAY - 600);
    const month = new Date().toISOString().slice(0, 7).replace('-', '');
    const history = await cqlRow(
      app,
      'SELECT TTL(available_units) AS t, available_units FROM seller_item_history WHERE seller = ? AND year_month = ? AND item_id = ?',
      [seller.login, Number(month), id],
    );
    expect(history?.available_units).toBe(10);
    expect(history?.t).toBeNull();
    const master = await cqlRow(app, 'SELECT TTL(available_units) AS t FROM items WHERE id = ?', [id]);
    expect(master?.t).toBeNull();
  });

  it('keeps a seller’s history by month of listing', async () => {
    const clock = new ManualClock(new Date('2025-03-10T12:00:00Z'));
    const past = await startApp({ clock });
    const own = await signUp(past);
    const march = await createItem(past, own, { name: 'March item' }, clock.now());
    clock.set('2025-04-02T08:00:00Z');
    const april = await createItem(past, own, { name: 'April item' }, clock.now());

    const inMarch = await gqlOk(past, ItemHistoryDocument, { login: own.login, month: '2025-03' }, own.token);
    expect(inMarch.itemHistory.edges.map((e) => e.node.id)).toEqual([march.id]);
    const inApril = await gqlOk(past, ItemHistoryDocument, { login: own.login, month: '2025-04' }, own.token);
    expect(inApril.itemHistory.edges.map((e) => e.node)).toMatchObject([{ id: april.id, name: 'April item', unitPrice: '19.99' }]);
    const inMay = await gqlOk(past, ItemHistoryDocument, { login: own.login, month: '2025-05' }, own.token);
    expect(inMay.itemHistory.edges).toEqual([]);
  });

  it.each([
    ['month', ItemHistoryDocument, { login: 'someone', month: '2026-13' }],
    ['month', ItemHistoryDocument, { login: 'someone', month: 'November' }],
    ['after', ItemsBySellerDocument, { login: 'someone', after: 'garbage' }],
    ['first', ItemsBySellerDocument, { login: 'someone', first: 0 }],
    ['tag', ItemsByTagDocument, { tag: '  ' }],
  ] as const)('names %s when it is malformed', async (field, doc, variables) => {
    const res = await gql(app, doc as typeof ItemHistoryDocument, variables as never, viewer.token);
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
    expect(res.errors?.[0]?.extensions?.field).toBe(field);
  });
});

describe('bad input never reaches Cassandra', () => {
  const huge = 'x'.repeat(70_000); // over Cassandra's 64 KiB key limit

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['over 64 KiB', huge],
    ['not a login', 'no spaces allowed!'],
    ['too long for a login', 'a'.repeat(33)],
  ])('a login that names nobody (%s) has no items and no history', async (_what, login) => {
    const sent = await stringParamsSentDuring(app, async () => {
      const bySeller = await gql(app, ItemsBySellerDocument, { login }, viewer.token);
      expect(bySeller.errors).toBeUndefined();
      expect(bySeller.data?.itemsBySeller).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
      const history = await gql(app, ItemHistoryDocument, { login, month: '2026-11' }, viewer.token);
      expect(history.errors).toBeUndefined();
      expect(history.data?.itemHistory).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    });
    expect(sent).not.toContain(login);
  });

  it.each([
    ['tag', ItemsByTagDocument, { tag: 't'.repeat(41) }],
    ['tag', ItemsByTagDocument, { tag: huge }],
    ['tag', ItemsByTagDocument, { tag: '' }],
    ['month', ItemHistoryDocument, { login: 'someone', month: '2026-00' }],
    ['month', ItemHistoryDocument, { login: 'someone', month: '2026-1' }],
    ['month', ItemHistoryDocument, { login: 'someone', month: huge }],
    ['month', ItemHistoryDocument, { login: huge, month: '2026-13' }],
    ['itemId', ItemDocument, { itemId: huge }],
    ['itemId', ItemDocument, { itemId: '' }],
    ['purchaseId', PurchaseDocument, { purchaseId: huge }],
    ['itemId', BuyItemDocument, { itemId: huge, quantity: 1 }],
    ['after', ItemsBySellerDocument, { login: 'someone', after: huge }],
  ] as const)('names %s when it cannot be valid', async (field, doc, variables) => {
    const sent = await stringParamsSentDuring(app, async () => {
      const res = await gql(app, doc as typeof ItemHistoryDocument, variables as never, viewer.token);
      expect(codes(res)).toEqual(['BAD_USER_INPUT']);
      expect(res.errors?.[0]?.extensions?.field).toBe(field);
    });
    const bad = Object.values(variables).filter((v): v is string => typeof v === 'string' && v !== 'someone');
    expect(sent.filter((p) => bad.includes(p))).toEqual([]);
  });
});

