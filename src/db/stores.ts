/** Every store, built on one Database. Add a domain's store here. */
import type { Database } from './client.js';
import { UserStore } from './users.js';
import { DirectMessageStore } from './conversations.js';
import { InboxStore } from './inbox.js';
import { ItemStore } from './items.js';
import { PurchaseStore } from './purchases.js';
import { PurchaseClaimStore } from './purchase-claims.js';
import { RoomStore } from './rooms.js';
import { RoomMessageStore } from './room-messages.js';

export function createStores(db: Database) {
  return {
    users: new UserStore(db),
    directMessages: new DirectMessageStore(db),
    inbox: new InboxStore(db),
    items: new ItemStore(db),
    purchases: new PurchaseStore(db),
    purchaseClaims: new PurchaseClaimStore(db),
    rooms: new RoomStore(db),
    roomMessages: new RoomMessageStore(db),
  };
}

export type Stores = ReturnType<typeof createStores>;
