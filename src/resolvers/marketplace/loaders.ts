/**
 * Per-request DataLoaders of the marketplace. They hang off the request's
 * Loaders object, so refreshLoaders (new loaders for each subscription event)
 * gives fresh ones here too.
 */
import DataLoader from 'dataloader';
import type { Context, Loaders } from '../../context.js';
import type { ItemRecord } from '../../db/items.js';
import type { StoredPurchase } from '../../db/purchases.js';

interface MarketLoaders {
  item: DataLoader<string, ItemRecord | null>;
  purchase: DataLoader<string, StoredPurchase | null>;
}

const byRequest = new WeakMap<Loaders, MarketLoaders>();

export function marketLoaders(ctx: Context): MarketLoaders {
  let loaders = byRequest.get(ctx.loaders);
  if (!loaders) {
    const { items, purchases } = ctx.services.stores;
    loaders = {
      item: new DataLoader(
        async (ids) => {
          const found = new Map((await items.byIds(ids)).map((i) => [i.id, i]));
          return ids.map((id) => found.get(id) ?? null);
        },
        { maxBatchSize: 100 },
      ),
      purchase: new DataLoader(
        async (ids) => {
          const found = new Map((await purchases.byIds(ids)).map((p) => [p.id, p]));
          return ids.map((id) => found.get(id) ?? null);
        },
        { maxBatchSize: 100 },
      ),
    };
    byRequest.set(ctx.loaders, loaders);
  }
  return loaders;
}
