/** Every store, built on one Database. Add a domain's store here. */
import type { Database } from './client.js';
import { UserStore } from './users.js';
import { RoomStore } from './rooms.js';
import { RoomMessageStore } from './room-messages.js';

export function createStores(db: Database) {
  return {
    users: new UserStore(db),
    rooms: new RoomStore(db),
    roomMessages: new RoomMessageStore(db),
  };
}

export type Stores = ReturnType<typeof createStores>;
