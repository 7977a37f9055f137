/**
 * Builds the long-lived parts of one instance: storage (starting or reusing the
 * local node when no cluster is configured), pub/sub, rate limits and tokens.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AroundRequest } from '../db/cassandra/client.js';
import { connectStorage } from '../db/cassandra/connect.js';
import type { StartupProgress } from '../db/cassandra/startup-wait.js';
import { createStores } from '../db/stores.js';
import { RevocationStore } from '../db/accounts/revocations.js';
import { InProcessPubSub } from '../pubsub/in-process.js';
import { RedisBackedPubSub } from '../pubsub/redis.js';
import { ShardedRedisPubSub } from '../pubsub/redis-cluster.js';
import type { PubSub } from '../pubsub/pubsub.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from '../rate-limiter.js';
import { scryptParams } from '../auth/passwords.js';
import { PasswordHasher } from '../auth/password-hasher.js';
import { ScryptThreads } from '../auth/scrypt-threads.js';
import { TokenService } from '../auth/tokens.js';
import { RevocationList } from '../auth/revocation-list.js';
import { newMarketplaceRuntime, type MarketplaceHooks } from '../resolvers/marketplace/runtime.js';
import { RoomSequencer } from '../resolvers/rooms/live/feed.js';
import { RecentRoomReads } from '../resolvers/rooms/live/feed-access.js';
import { CoalescedEvents } from '../resolvers/shared/coalesced-events.js';
import { RoomPresence } from '../resolvers/rooms/live/presence.js';
import { MemoryPresence, RedisPresence, type PresenceStore } from '../presence/presence-store.js';
import { type Services } from '../resolvers/services.js';
import { systemClock, type Clock } from '../clock.js';
import { Metrics } from '../observability/metrics.js';

export async function buildServices(
  config: Config,
  logger: Logger,
  clock: Clock = systemClock,
  aroundCql?: AroundRequest,
  /** Fault hooks of a test (AppOptions.hooks); none in production. */
  hooks?: MarketplaceHooks,
  /** Told why the start still waits for storage (the instance's /ready shows it meanwhile). */
  progress?: StartupProgress,
): Promise<Services> {
  const metrics = new Metrics(config.metrics);
  const db = await connectStorage(config.cassandra, logger, aroundCql, metrics.cassandraRequestTracker(), progress);

  let pubsub: PubSub;
  let rateLimiter: RateLimiter;
  let presenceStore: PresenceStore = new MemoryPresence();
  if (config.redisClusterNodes) {
    const shardedPubSub = ShardedRedisPubSub.connect(config.redisClusterNodes, logger, config.redisPrefix, metrics);
    pubsub = shardedPubSub;
    rateLimiter = new RedisRateLimiter(shardedPubSub.cluster, logger, `${config.redisPrefix}ratelimit:`, shardedPubSub.steps);
    presenceStore = new RedisPresence(shardedPubSub.cluster, config.redisPrefix, randomUUID());
  } else if (config.redisUrl) {
    const redisPubSub = RedisBackedPubSub.connect(config.redisUrl, logger, config.redisPrefix, metrics);
    pubsub = redisPubSub;
    rateLimiter = new RedisRateLimiter(redisPubSub.publisher, logger, `${config.redisPrefix}ratelimit:`);
    presenceStore = new RedisPresence(redisPubSub.publisher, config.redisPrefix, randomUUID());
  } else {
    pubsub = new InProcessPubSub(logger, metrics);
    rateLimiter = new MemoryRateLimiter();
  }
  pubsub.watchDelivery({ onDeliveryChange: (live) => live || metrics.deliveryLost() });
  const revocations = new RevocationList(new RevocationStore(db), pubsub, logger);
  // Independent: loading revocations, importing the key and the decoy hash (a full scrypt) run together.
  const { passwordHashConcurrency, passwordHashQueue, passwordHashMaxWaitMs, passwordHashNice } = config.auth;
  const gate = { concurrency: passwordHashConcurrency, queue: passwordHashQueue, maxWaitMs: passwordHashMaxWaitMs };
  // A thread per slot of the gate: the gate lets no more hash at once.
  const passwords = new PasswordHasher(scryptParams(config.auth), gate, new ScryptThreads(gate.concurrency, passwordHashNice, logger));
  const [tokens, decoyPasswordHash] = await Promise.all([
    TokenService.create(config.auth, config.production),
    passwords.hash(randomBytes(16).toString('hex')),
    revocations.start(config.auth.tokenTtlSeconds * 1000),
  ]).catch(async (err: unknown) => {
    // A start that fails here leaves no hashing threads behind (a test process starts many apps).
    await passwords.close();
    throw err;
  });
  const stores = createStores(db);
  const sequencer = new RoomSequencer(pubsub, logger);
  return {
    config,
    logger,
    clock,
    db,
    stores,
    pubsub,
    tokens,
    revocations,
    rateLimiter,
    metrics,
    passwords,
    decoyPasswordHash,
    marketplace: newMarketplaceRuntime(hooks),
    rooms: {
      sequencer,
      recentReads: new RecentRoomReads({ stores, clock }),
      coalescedEvents: new CoalescedEvents(config.rooms.reactionEventWindowMs, logger),
      presence: new RoomPresence(presenceStore, { pubsub, clock, logger, stores }, config.rooms.presenceTtlMs),
    },
  };
}
