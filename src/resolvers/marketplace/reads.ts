/**
 * The marketplace's per-request reads: items and purchases by id, in batches, cached for the request alone.
 */
import type DataLoader from 'dataloader';
import type { ItemRecord } from '../../db/marketplace/items.js';
import type { StoredPurchase } from '../../db/marketplace/purchases.js';
import type { Context } from '../context.js';
import { byKey, perRequest } from '../shared/per-request.js';

const ITEMS = Symbol('items');
const PURCHASES = Symbol('purchases');

export function itemLoader(ctx: Context): DataLoader<string, ItemRecord | null> {
  return perRequest(ctx, ITEMS, ({ items }) => byKey((ids: readonly string[]) => items.byIds(ids), (item) => item.id));
}

export function purchaseLoader(ctx: Context): DataLoader<string, StoredPurchase | null> {
  return perRequest(ctx, PURCHASES, ({ purchases }) => byKey((ids: readonly string[]) => purchases.byIds(ids), (purchase) => purchase.id));
}
