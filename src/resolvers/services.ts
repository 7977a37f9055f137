/**
 * The long-lived parts every request shares, built once per app instance.
 */
import type { PasswordHasher } from '../auth/password-hasher.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/cassandra/client.js';
import type { Stores } from '../db/stores.js';
import type { PubSub } from '../pubsub/pubsub.js';
import type { TokenService } from '../auth/tokens.js';
import type { RevocationList } from '../auth/revocation-list.js';
import type { RateLimiter } from '../rate-limiter.js';
import type { MarketplaceRuntime } from './marketplace/runtime.js';
import type { RoomSequencer } from './rooms/live/feed.js';
import type { RecentRoomReads } from './rooms/live/feed-access.js';
import type { CoalescedEvents } from './shared/coalesced-events.js';
import type { RoomPresence } from './rooms/live/presence.js';
import type { Metrics } from '../observability/metrics.js';

export interface Services {
  config: Config;
  logger: Logger;
  clock: Clock;
  db: Database;
  stores: Stores;
  pubsub: PubSub;
  tokens: TokenService;
  revocations: RevocationList;
  rateLimiter: RateLimiter;
  /** The instance's Prometheus metrics; domain code counts through its methods. */
  metrics: Metrics;
  /** Every password hash and check of the process, through one bounded gate. */
  passwords: PasswordHasher;
  /** A hash of a random password, verified against when the login is unknown so both paths cost the same. */
  decoyPasswordHash: string;
  /** Marketplace counters and (in tests) fault hooks. */
  marketplace: MarketplaceRuntime;
  rooms: {
    /** Each room's publish order on this instance. */
    sequencer: RoomSequencer;
    /** Room rows shared by this instance's feed re-checks. */
    recentReads: RecentRoomReads;
    /** Live events due, coalesced per subject: ReactionChanged per message, RoomReadUpdated per room. */
    coalescedEvents: CoalescedEvents;
    /** Who is online in each room, from every instance's open roomEvents subscriptions. */
    presence: RoomPresence;
  };
}
