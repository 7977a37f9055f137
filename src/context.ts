/**
 * The GraphQL context, built in one typed function for HTTP and WebSocket alike.
 */
import DataLoader from 'dataloader';
import type { UserRecord } from './db/accounts/users.js';
import type { ItemRecord } from './db/marketplace/items.js';
import type { StoredPurchase } from './db/marketplace/purchases.js';
import type { Session } from './auth/tokens.js';
import type { Services } from './services.js';
import type { Stores } from './db/stores.js';
import { isPossibleLogin } from './validation.js';

/** A loader that reads rows by key in batches of 100 and answers null for a key with no row. */
function byKey<K, V>(read: (keys: readonly K[]) => Promise<V[]>, keyOf: (row: V) => K): DataLoader<K, V | null> {
  return new DataLoader<K, V | null>(
    async (keys) => {
      const found = new Map((await read(keys)).map((row) => [keyOf(row), row]));
      return keys.map((key) => found.get(key) ?? null);
    },
    { maxBatchSize: 100 },
  );
}

const userLogin = (user: UserRecord) => user.login;
const itemId = (item: ItemRecord) => item.id;
const purchaseId = (purchase: StoredPurchase) => purchase.id;

/**
 * Every per-request DataLoader: one batch per kind of row and request, and
 * nothing cached across requests. Each is made on first use: most operations
 * need one kind or none, and a subscription's context lives for hours.
 */
export class Loaders {
  private users?: DataLoader<string, UserRecord | null>;
  private items?: DataLoader<string, ItemRecord | null>;
  private purchases?: DataLoader<string, StoredPurchase | null>;

  constructor(private readonly stores: Stores) {}

  get user(): DataLoader<string, UserRecord | null> {
    const { users } = this.stores;
    // A string that cannot be a login names nobody, and must not reach Cassandra (empty or huge keys fail there).
    return (this.users ??= byKey((logins: readonly string[]) => users.byLogins(logins.filter(isPossibleLogin)), userLogin));
  }

  get item(): DataLoader<string, ItemRecord | null> {
    const { items } = this.stores;
    return (this.items ??= byKey((ids: readonly string[]) => items.byIds(ids), itemId));
  }

  get purchase(): DataLoader<string, StoredPurchase | null> {
    const { purchases } = this.stores;
    return (this.purchases ??= byKey((ids: readonly string[]) => purchases.byIds(ids), purchaseId));
  }
}

export interface Context {
  services: Services;
  /** The authenticated session, or null for an anonymous caller (fields that read it: src/schema/shared/viewer-dependent.ts). */
  viewer: Session | null;
  clientAddress: string;
  /** This request's id (HTTP) or this operation's (WebSocket), as in the logs and the x-request-id header. */
  requestId: string;
  loaders: Loaders;
}

export function buildContext(
  services: Services,
  session: Session | null,
  clientAddress: string,
  requestId: string,
): Context {
  return {
    services,
    viewer: session,
    clientAddress,
    requestId,
    loaders: new Loaders(services.stores),
  };
}

/**
 * Subscriptions share one context for their whole life; give each event fresh
 * loaders so a user renamed an hour ago is not served from a stale cache.
 */
export function refreshLoaders(ctx: Context): void {
  ctx.loaders = new Loaders(ctx.services.stores);
}
