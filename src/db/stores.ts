/** Every store, built on one Database. Add a domain's store here. */
import type { Database } from './client.js';
import { UserStore } from './users.js';

export function createStores(db: Database) {
  return {
    users: new UserStore(db),
  };
}

export type Stores = ReturnType<typeof createStores>;
