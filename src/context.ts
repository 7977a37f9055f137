/**
 * The GraphQL context, built in one typed function for HTTP and WebSocket alike.
 */
import DataLoader from 'dataloader';
import type { UserRecord } from './db/users.js';
import type { Session } from './auth/tokens.js';
import type { Services } from './services.js';
import { isPossibleLogin } from './validation.js';

export interface Loaders {
  user: DataLoader<string, UserRecord | null>;
}

export interface Context {
  services: Services;
  /** The authenticated session, or null for an anonymous caller. */
  viewer: Session | null;
  clientAddress: string;
  /** This request's id (HTTP) or this operation's (WebSocket), as in the logs and the x-request-id header. */
  requestId: string;
  loaders: Loaders;
}

export function createLoaders(services: Services): Loaders {
  return {
    user: new DataLoader<string, UserRecord | null>(
      async (logins) => {
        // A string that cannot be a login names nobody, and must not reach Cassandra (empty or huge keys fail there).
        const users = await services.stores.users.byLogins(logins.filter(isPossibleLogin));
        const byLogin = new Map(users.map((u) => [u.login, u]));
        return logins.map((login) => byLogin.get(login) ?? null);
      },
      { maxBatchSize: 100 },
    ),
  };
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
    loaders: createLoaders(services),
  };
}

/**
 * Subscriptions share one context for their whole life; give each event fresh
 * loaders so a user renamed an hour ago is not served from a stale cache.
 */
export function refreshLoaders(ctx: Context): void {
  ctx.loaders = createLoaders(ctx.services);
}
