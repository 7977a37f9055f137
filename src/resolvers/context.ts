/**
 * The GraphQL context, built in one typed function for HTTP and WebSocket alike.
 */
import DataLoader from 'dataloader';
import type { UserRecord } from '../db/accounts/users.js';
import type { RoomRecord } from '../db/rooms/rooms.js';
import type { MessageRecord } from '../db/rooms/messages/message-row.js';
import type { ItemRecord } from '../db/marketplace/items.js';
import type { StoredPurchase } from '../db/marketplace/purchases.js';
import type { Session } from '../auth/tokens.js';
import type { Services } from './services.js';
import type { Stores } from '../db/stores.js';
import { isPossibleLogin } from '../validation.js';
import { timeTicksOf } from '../timeuuids.js';
import type { ChatUser } from '../db/rooms/chat-user.js';
import { distinctPeople } from './rooms/people.js';

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
const roomName = (room: RoomRecord) => room.name;

/**
 * Every per-request DataLoader: one batch per kind of row and request, and
 * nothing cached across requests. Each is made on first use: most operations
 * need one kind or none, and a subscription's context lives for hours.
 */
export class Loaders {
  private users?: DataLoader<string, UserRecord | null>;
  private items?: DataLoader<string, ItemRecord | null>;
  private purchases?: DataLoader<string, StoredPurchase | null>;
  private rooms?: DataLoader<string, RoomRecord | null>;
  private messages?: DataLoader<string, MessageRecord | null>;
  private markers?: DataLoader<string, Map<string, string | null>>;
  private readers?: DataLoader<string, Map<string, bigint>>;
  private people?: DataLoader<string, ChatUser[]>;
  private mine?: DataLoader<ViewerReactionsKey, Set<string>, string>;
  private votes?: DataLoader<string, Map<string, number[]>>;

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

  /** Rooms by stored (lowercase, valid) name: callers pass names read from storage or validated. */
  get room(): DataLoader<string, RoomRecord | null> {
    const { rooms } = this.stores;
    return (this.rooms ??= byKey((names: readonly string[]) => rooms.byNames(names), roomName));
  }

  /**
   * Room messages by roomMessageKey(room, id): those of one room are read
   * together, one query per day bucket (replies' parents on a thread page),
   * and the rooms side by side (the last-read messages of a room list).
   */
  get message(): DataLoader<string, MessageRecord | null> {
    const { roomMessages } = this.stores;
    return (this.messages ??= new DataLoader<string, MessageRecord | null>(
      async (keys) => {
        const byRoom = new Map<string, string[]>();
        for (const key of keys) {
          const [room, id] = key.split('\u0000') as [string, string];
          byRoom.set(room, [...(byRoom.get(room) ?? []), id]);
        }
        const found = new Map<string, MessageRecord>();
        // The rooms side by side: a room list's last-read messages are one per room.
        await Promise.all(
          [...byRoom].map(async ([room, ids]) => {
            for (const [id, message] of await roomMessages.byIds(room, ids)) found.set(roomMessageKey(room, id), message);
          }),
        );
        return keys.map((key) => found.get(key) ?? null);
      },
      { maxBatchSize: 100 },
    ));
  }

  /**
   * Every participant's read marker in a room, by login, as its time in ticks (100 ns): one read per room for a
   * whole page of seenBy, and each marker parsed once.
   */
  get roomReaders(): DataLoader<string, Map<string, bigint>> {
    const { readState } = this.stores;
    const ticksOf = (markers: Map<string, string>) => new Map([...markers].map(([login, id]) => [login, timeTicksOf(id)]));
    return (this.readers ??= new DataLoader((rooms: readonly string[]) => Promise.all(rooms.map(async (room) => ticksOf(await readState.readersOf(room))))));
  }

  /** A room's participants, one entry per login in login order (distinctPeople), worked out once per request. */
  get roomPeople(): DataLoader<string, ChatUser[]> {
    return (this.people ??= new DataLoader(async (names: readonly string[]) =>
      (await this.room.loadMany(names)).map((room) => (room && !(room instanceof Error) ? distinctPeople(room.participants) : [])),
    ));
  }

  /** A user's read markers in every room, by room name: one read for a whole room list. */
  get readMarkers(): DataLoader<string, Map<string, string | null>> {
    const { readState } = this.stores;
    return (this.markers ??= new DataLoader((logins: readonly string[]) => Promise.all(logins.map((login) => readState.markers(login)))));
  }

  /** Which of a message's emoji a user reacted with: one read per message and request. */
  get viewerReactions(): DataLoader<ViewerReactionsKey, Set<string>, string> {
    const { reactions } = this.stores;
    return (this.mine ??= new DataLoader(
      (keys: readonly ViewerReactionsKey[]) => Promise.all(keys.map((k) => reactions.mine(k.message, k.emojis, k.login))),
      { cacheKeyFn: (k) => `${roomMessageKey(k.message.roomName, k.message.messageId)}\u0000${k.login}` },
    ));
  }

  /**
   * Every vote of a poll by roomMessageKey(room, id), each voter's answers by login: one read of the votes partition
   * gives the counts and every viewer's own answers. A vote or retraction clears its poll's key.
   */
  get pollVotes(): DataLoader<string, Map<string, number[]>> {
    const { pollVotes } = this.stores;
    return (this.votes ??= new DataLoader((keys: readonly string[]) =>
      Promise.all(
        keys.map((key) => {
          const [room, id] = key.split('\u0000') as [string, string];
          return pollVotes.votes(room, id);
        }),
      ),
    ));
  }

  get purchase(): DataLoader<string, StoredPurchase | null> {
    const { purchases } = this.stores;
    return (this.purchases ??= byKey((ids: readonly string[]) => purchases.byIds(ids), purchaseId));
  }
}

interface ViewerReactionsKey {
  message: MessageRecord;
  emojis: string[];
  login: string;
}

/** The key of a room message in Loaders.message. */
export const roomMessageKey = (roomName: string, messageId: string) => `${roomName}\u0000${messageId}`;

export interface Context {
  services: Services;
  /** The authenticated session, or null for an anonymous caller (fields that read it: src/schema/shared/viewer-dependent.ts). */
  viewer: Session | null;
  clientAddress: string;
  /** This request's id (HTTP) or this operation's (WebSocket), as in the logs and the x-request-id header. */
  requestId: string;
  loaders: Loaders;
  /** An SSE client's Last-Event-ID header: the cursor a reconnecting EventSource resumes from. */
  lastEventId?: string;
  /**
   * Set on the context a live event is executed with (contextForEvent): `loaders` are that event's, shared by
   * every subscriber who executes it, and fresh for it already.
   */
  eventLoaders?: Loaders;
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
 * loaders so a user renamed an hour ago is not served from a stale cache. An
 * event executed with contextForEvent keeps the event's own.
 */
export function refreshLoaders(ctx: Context): void {
  ctx.loaders = ctx.eventLoaders ?? new Loaders(ctx.services.stores);
}

/**
 * A subscriber's context for executing one live event, with `loaders` that
 * every subscriber executing that event shares: whoever the viewer, the
 * event's rows (a poll's votes, a room's readers and participants, a
 * forwarded original) are read once, and each subscriber's execution answers
 * and authorizes from them for its own viewer. Sound because every loader is
 * keyed by what it reads, never by who asks (viewerReactions carries the login
 * in its key). Everything else is read through to the subscriber's context.
 */
export function contextForEvent(ctx: Context, loaders: Loaders): Context {
  const eventContext = Object.create(ctx) as Context;
  eventContext.loaders = loaders;
  eventContext.eventLoaders = loaders;
  return eventContext;
}
