/**
 * Values kept for one request, or one live event, on its context: each domain's DataLoaders (its reads.ts), made
 * on first use. Most operations need one kind or none, and a subscription's context lives for hours.
 */
import DataLoader from 'dataloader';
import type { Stores } from '../../db/stores.js';
import type { Context } from '../context.js';

/** The value under `key` for this request (or live event), made by `make` from the stores on first use. */
export function perRequest<T>(ctx: Context, key: symbol, make: (stores: Stores) => T): T {
  let value = ctx.loaders.get(key) as T | undefined;
  if (value === undefined) ctx.loaders.set(key, (value = make(ctx.services.stores)));
  return value;
}

/** A loader that reads rows by key in batches of 100 and answers null for a key with no row. */
export function byKey<K, V>(read: (keys: readonly K[]) => Promise<V[]>, keyOf: (row: V) => K): DataLoader<K, V | null> {
  return new DataLoader<K, V | null>(
    async (keys) => {
      const found = new Map((await read(keys)).map((row) => [keyOf(row), row]));
      return keys.map((key) => found.get(key) ?? null);
    },
    { maxBatchSize: 100 },
  );
}

/** What `split` makes of each key (a group and a value), the values grouped; a key it answers null for is left out. */
export function groupBy<T>(keys: readonly string[], split: (key: string) => readonly [string, T] | null): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const key of keys) {
    const parts = split(key);
    if (!parts) continue;
    const group = groups.get(parts[0]);
    if (group) group.push(parts[1]);
    else groups.set(parts[0], [parts[1]]);
  }
  return groups;
}
