/**
 * Reading purchases: one by id (its buyer or its item's seller only), the
 * viewer's own history, and an item's purchases (its seller only).
 */
import type { Context } from '../context.js';
import type { PurchaseRecord } from '../../db/marketplace/purchases.js';
import type { UserRecord } from '../../db/accounts/users.js';
import { forbidden, notFound } from '../../errors.js';
import { existingUser } from '../accounts/accounts.js';
import { connection, type Connection } from '../../pagination.js';
import { pageSize } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';
import { eachVisibleOrNull } from '../shared/nodes.js';
import { afterId, idCursor, parseId } from './ids.js';
import type { ItemView } from './items.js';
import { itemLoader, purchaseLoader } from './reads.js';

export async function purchaseById(ctx: Context, rawId: string): Promise<PurchaseRecord | null> {
  const viewer = requireViewer(ctx);
  const purchase = await purchaseLoader(ctx).load(parseId('purchaseId', 'Purchase', rawId));
  if (!purchase) return null;
  if (viewer.login !== purchase.buyer && viewer.login !== purchase.seller) {
    throw forbidden('Only the buyer and the seller see a purchase');
  }
  return purchase;
}

/** node(id:)'s purchases, by key: their buyer and their seller, as with purchase(purchaseId:). */
export function purchaseNodes(ctx: Context, keys: readonly string[]): Array<Promise<PurchaseRecord | null>> {
  return eachVisibleOrNull(keys, (key) => purchaseById(ctx, key));
}

/** The viewer's completed purchases, newest first. */
export async function myPurchases(ctx: Context, first?: number | null, after?: string | null): Promise<Connection<PurchaseRecord>> {
  const viewer = requireViewer(ctx);
  const limit = pageSize('first', first);
  const before = afterId('after', after);
  const page = await ctx.services.stores.purchases.byBuyer(viewer.login, limit, before);
  return connection(page.rows, (p) => idCursor(p.id), { hasNextPage: page.more });
}

/** The item's completed purchases, newest first: for its seller only. */
export async function itemPurchases(
  ctx: Context,
  item: ItemView,
  first?: number | null,
  after?: string | null,
): Promise<Connection<PurchaseRecord>> {
  const viewer = requireViewer(ctx);
  if (viewer.login !== item.seller) throw forbidden('Only the seller sees the purchases of an item');
  const limit = pageSize('first', first);
  const before = afterId('after', after);
  const page = await ctx.services.stores.purchases.byItem(item, limit, before);
  return connection(page.rows, (p) => idCursor(p.id), { hasNextPage: page.more });
}

export async function purchaseItem(ctx: Context, purchase: PurchaseRecord): Promise<ItemView> {
  const item = await itemLoader(ctx).load(purchase.itemId);
  if (!item) throw notFound('Item');
  return item;
}

export function purchaseBuyer(ctx: Context, purchase: PurchaseRecord): Promise<UserRecord> {
  return existingUser(ctx, purchase.buyer);
}
