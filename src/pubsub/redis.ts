import { RedisPubSub } from 'graphql-redis-subscriptions';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createRedis } from './redis-connection.js';
import type { PubSub, Unsubscribe } from './pubsub.js';


/**
 * Events through Redis with graphql-redis-subscriptions: a publisher and a
 * separate subscriber connection (a subscribed connection can run nothing else).
 */
export class RedisBackedPubSub implements PubSub {
  private readonly engine: RedisPubSub;
  private readonly counts = new Map<string, number>();

  constructor(
    readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly logger: Logger,
    /** Namespaces channels, so deployments (or test runs) sharing one Redis never hear each other. */
    private readonly prefix: string,
  ) {
    // graphql-redis-subscriptions fires UNSUBSCRIBE/PUNSUBSCRIBE without handling their promises; while
    // Redis is down (or during shutdown) those reject and would be unhandled rejections. Observe them here.
    for (const method of ['unsubscribe', 'punsubscribe'] as const) {
      const original = subscriber[method].bind(subscriber) as (...args: unknown[]) => Promise<unknown>;
      (subscriber as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const pending = original(...args);
        pending.catch((err: Error) => logger.debug({ err: err.message, method }, 'redis unsubscribe failed'));
        return pending;
      };
    }
    // Delivery is live while the subscriber connection is up and resubscribed. ioredis resubscribes
    // every channel when it reconnects, before 'ready' is handled here; a PING sent now is answered
    // after those SUBSCRIBEs, so when it returns every listen() hears events again.
    subscriber.on('close', () => this.setLive(false));
    subscriber.on('ready', () => {
      subscriber.ping().then(
        () => this.setLive(true),
        (err: Error) => logger.debug({ err: err.message }, 'redis subscriber ping failed'),
      );
    });
    this.engine = new RedisPubSub({
      publisher,
      subscriber,
      connectionListener: (err) => {
        if (err) logger.error({ err: err.message }, 'redis pub/sub connection error');
      },
    });
  }

  static connect(url: string, logger: Logger, prefix: string): RedisBackedPubSub {
    return new RedisBackedPubSub(
      createRedis(url, logger, 'publisher', { commandTimeoutMs: 1000 }),
      // No command timeout: a subscribed connection waits for messages by design.
      createRedis(url, logger, 'subscriber'),
      logger,
      `${prefix}events:`,
    );
  }

  async publish(channel: string, event: unknown): Promise<void> {
    await this.engine.publish(this.prefix + channel, event);
  }

  async listen<T>(channel: string, onEvent: (event: T) => void): Promise<Unsubscribe> {
    const id = await this.engine.subscribe(this.prefix + channel, (event: T) => {
      try {
        onEvent(event);
      } catch (err) {
        this.logger.error({ err, channel }, 'pub/sub listener failed');
      }
    });
    this.counts.set(channel, (this.counts.get(channel) ?? 0) + 1);
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      this.counts.set(channel, (this.counts.get(channel) ?? 1) - 1);
      if (this.counts.get(channel) === 0) this.counts.delete(channel);
      this.engine.unsubscribe(id);
    };
  }

  private live = true;
  private readonly deliveryListeners = new Set<(live: boolean) => void>();

  private setLive(live: boolean): void {
    if (live === this.live) return;
    this.live = live;
    this.logger.info({ live }, live ? 'pub/sub delivery restored' : 'pub/sub delivery lost');
    for (const listener of this.deliveryListeners) listener(live);
  }

  onDeliveryChange(listener: (live: boolean) => void): () => void {
    this.deliveryListeners.add(listener);
    return () => this.deliveryListeners.delete(listener);
  }

  listeners(channel: string): number {
    return this.counts.get(channel) ?? 0;
  }

  async ping(): Promise<void> {
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }
}
