/**
 * itemUpdated across two instances sharing Redis: each purchase on one reaches
 * the subscribers on the other with the newest stock, and a subscription ends
 * with the sale (sold out or past its end date), releasing its listener.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { itemChannel, publishItem } from '../../src/resolvers/marketplace/events.js';
import { BuyItemDocument, ItemUpdatedDocument } from '../generated/graphql.js';
import { ManualClock, startApp } from '../testkit/app.js';
import { gqlOk } from '../testkit/http.js';
import { createItem } from '../testkit/data/marketplace.js';
import { eventually } from '../testkit/poll.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { subscribe, wsClient, type WsClient } from '../testkit/ws.js';
import { withDeadline } from '../testkit/poll.js';
import { keyOf } from '../testkit/ids.js';

let a: App;
let b: App;
let seller: TestUser;
let buyer: TestUser;
const clients: WsClient[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  [seller, buyer] = await signUpMany(a, 2, 'live');
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
});

function client(app: App, token?: string): WsClient {
  const c = wsClient(app, token);
  clients.push(c);
  return c;
}

describe('itemUpdated', () => {
  it('delivers the item after each purchase made on another server, newest stock only', async () => {
    const item = await createItem(a, seller, { offeredUnits: 6, unitPrice: '19.99' });
    const sub = subscribe(client(b, buyer.token), ItemUpdatedDocument, { itemId: item.id });
    await eventually(() => b.services.pubsub.listeners(itemChannel(keyOf(item.id))) === 1, { what: 'subscription live on b' });

    await gqlOk(a, BuyItemDocument, { itemId: item.id, quantity: 2 }, buyer.token);
    const first = await sub.next(20_000);
    expect(first.errors).toBeUndefined();
    expect(first.data?.itemUpdated).toEqual({
      id: item.id,
      availableUnits: 4,
      auctionFinished: false,
      unitPrice: '19.99',
      seller: { login: seller.login },
    });

    // A stale snapshot (more stock than already delivered) is dropped, not shown as live stock.
    const stale = (await a.services.stores.items.byId(keyOf(item.id)))!;
    await publishItem(a.services.pubsub, { ...stale, availableUnits: 5 });

    await gqlOk(a, BuyItemDocument, { itemId: item.id, quantity: 4 }, buyer.token);
    const last = await sub.next(20_000);
    expect(last).toEqual({
      data: { itemUpdated: { id: item.id, availableUnits: 0, auctionFinished: true, unitPrice: '19.99', seller: { login: seller.login } } },
    });
    // The sale is over: the stream completes, the stale snapshot was never delivered, nothing else follows.
    await withDeadline(sub.completed, 30_000, 'completion of the subscription');
    expect(sub.pending()).toBe(0);
    sub.unsubscribe();
    await eventually(() => b.services.pubsub.listeners(itemChannel(keyOf(item.id))) === 0, { what: 'listener released on b' });
  });

  it('refuses an unknown item and an anonymous subscriber', async () => {
    const unknown = subscribe(client(b, buyer.token), ItemUpdatedDocument, { itemId: '6f1c2b40-e65b-11f1-b990-0200581be2e0' });
    const res = await unknown.next();
    expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    const item = await createItem(a, seller);
    const anonymous = subscribe(client(b), ItemUpdatedDocument, { itemId: item.id });
    expect((await anonymous.next()).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('completes after the purchase that sells the item out, releasing its listener', async () => {
    const item = await createItem(a, seller, { offeredUnits: 3 });
    const sub = subscribe(client(b, buyer.token), ItemUpdatedDocument, { itemId: item.id });
    await eventually(() => b.services.pubsub.listeners(itemChannel(keyOf(item.id))) === 1, { what: 'subscription live on b' });
    await gqlOk(a, BuyItemDocument, { itemId: item.id, quantity: 3 }, buyer.token);
    expect(await sub.next(20_000)).toEqual({
      data: { itemUpdated: { id: item.id, availableUnits: 0, auctionFinished: true, unitPrice: '19.99', seller: { login: seller.login } } },
    });
    await withDeadline(sub.completed, 30_000, 'completion of the subscription');
    await eventually(() => b.services.pubsub.listeners(itemChannel(keyOf(item.id))) === 0, { what: 'listener released on b' });
  });

  it('completes at the end date of the sale', async () => {
    const soon = await createItem(a, seller, { offeredUnits: 3, endDate: new Date(Date.now() + 8_000).toISOString() });
    const sub = subscribe(client(b, buyer.token), ItemUpdatedDocument, { itemId: soon.id });
    await eventually(() => b.services.pubsub.listeners(itemChannel(keyOf(soon.id))) === 1, { what: 'subscription live on b' });
    await withDeadline(sub.completed, 30_000, 'completion of the subscription at the end date');
    expect(sub.pending()).toBe(0);
    expect(b.services.pubsub.listeners(itemChannel(keyOf(soon.id)))).toBe(0);
  });

  it('refuses an item already sold out or past its end date, holding no listener', async () => {
    const soldOut = await createItem(a, seller, { offeredUnits: 1 });
    await gqlOk(a, BuyItemDocument, { itemId: soldOut.id, quantity: 1 }, buyer.token);
    const refused = subscribe(client(b, buyer.token), ItemUpdatedDocument, { itemId: soldOut.id });
    expect((await refused.next()).errors?.[0]?.extensions?.code).toBe('AUCTION_FINISHED');
    expect(b.services.pubsub.listeners(itemChannel(soldOut.id))).toBe(0);

    const clock = new ManualClock(new Date());
    const later = await startApp({ redis: true, clock });
    const ended = await createItem(later, seller, { offeredUnits: 5 }, clock.now());
    clock.advance(25 * 3_600_000);
    const tooLate = subscribe(client(later, buyer.token), ItemUpdatedDocument, { itemId: ended.id });
    expect((await tooLate.next()).errors?.[0]?.extensions?.code).toBe('AUCTION_FINISHED');
    expect(later.services.pubsub.listeners(itemChannel(ended.id))).toBe(0);
  });
});
