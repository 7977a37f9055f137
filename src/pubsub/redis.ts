/** The pub/sub engine on one Redis: PUBLISH on a publisher connection, SUBSCRIBE on a subscriber connection of its own. */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createRedis } from './redis-connection.js';
import type { DeliveryWatcher, Listener, PubSub } from './pubsub.js';
import type { PubSubMeter } from './listeners.js';
import { PUBLISH_TIMEOUT_MS, RedisEvents, redisEventChannel } from './redis-events.js';

// Where callers (the bench, the tests) have always found it.
export { redisEventChannel };

/** Publishes held through a handshake at most (see afterHandshake). */
const MAX_HELD = 10_000;

/**
 * Events through Redis: a publisher and a separate subscriber connection (a subscribed connection can run nothing
 * else). What both Redis engines share (stamps, listeners, notices of failed publishes, delivery state) is in
 * RedisEvents; what is this engine's own is how one Redis connection behaves across a reconnect: publishes held
 * through its handshake, and the channels subscribed again once it is ready.
 */
export class RedisBackedPubSub implements PubSub {
  private readonly events: RedisEvents;
  /** Publishes made while the publisher connection is in its handshake, each a function that sends it: see publish(). */
  private readonly held: Array<() => void> = [];

  constructor(
    readonly publisher: Redis,
    /** Made with autoResubscribe off: see subscribeAgain(). */
    private readonly subscriber: Redis,
    private readonly logger: Logger,
    /** Namespaces channels, so deployments (or test runs) sharing one Redis never hear each other. */
    prefix: string,
    meter: PubSubMeter,
  ) {
    this.events = new RedisEvents({
      prefix,
      logger,
      meter,
      noticeConnection: publisher,
      deliverUnparsed: true,
      commands: {
        send: (redisChannel, message) => publisher.publish(redisChannel, message),
        subscribe: (redisChannel) => subscriber.subscribe(redisChannel),
        unsubscribe: (redisChannel) => this.leave(redisChannel),
      },
    });
    subscriber.on('message', (channel: string, message: string) => this.events.arrived(channel, message));
    // Delivery is live while the subscriber connection is up and subscribed again (subscribeAgain).
    subscriber.on('close', () => this.events.delivery.set(false));
    subscriber.on('ready', () => this.subscribeAgain());
    if (subscriber.status === 'ready') this.subscribeAgain();
    for (const handshakeEnded of ['ready', 'close'] as const) publisher.on(handshakeEnded, () => this.releaseHeld());
  }

  static connect(url: string, logger: Logger, prefix: string, meter: PubSubMeter): RedisBackedPubSub {
    return new RedisBackedPubSub(
      createRedis(url, logger, 'publisher', { commandTimeoutMs: PUBLISH_TIMEOUT_MS }),
      // No command timeout: a subscribed connection waits for messages by design.
      createRedis(url, logger, 'subscriber', { autoResubscribe: false }),
      logger,
      redisEventChannel(prefix, ''),
      meter,
    );
  }

  /**
   * The subscriber connection is ready (at start, and after each reconnect): it subscribes to every channel this
   * instance listens on, the notices of failed publishes' among them (missed-publishes.ts), then sends a PING,
   * answered after those SUBSCRIBEs: once it is, every listen() hears events again. This engine subscribes again
   * itself, rather than ioredis (autoResubscribe): ioredis would subscribe again to what the old connection had,
   * channels whose UNSUBSCRIBE failed while Redis was down included (Redis would then send their events here for
   * the process's life), and leaves the promise of that SUBSCRIBE unhandled (a rejection would end the process).
   */
  private subscribeAgain(): void {
    this.subscriber.subscribe(...this.events.redisChannels()).catch((err: Error) => {
      // The connection dropped again: its next 'ready' subscribes again.
      this.logger.debug({ err: err.message, method: 'subscribe' }, 'redis (un)subscribe failed');
    });
    this.subscriber.ping().then(
      () => this.events.delivery.set(true),
      (err: Error) => this.logger.debug({ err: err.message }, 'redis subscriber ping failed'),
    );
  }

  /**
   * UNSUBSCRIBE, not awaited: it is written at once during a handshake (where it may never be answered), and
   * waits for Redis while it is down. One that fails needs nothing more: the channel is no longer this instance's,
   * and the connection that held it is gone (the next one subscribes only to this instance's channels).
   */
  private leave(redisChannel: string): void {
    this.subscriber.unsubscribe(redisChannel).catch((err: Error) => {
      this.logger.debug({ err: err.message, method: 'unsubscribe' }, 'redis (un)subscribe failed');
    });
  }

  publish(channel: string, event: unknown): Promise<void> {
    // In its handshake (connected, not yet ready) ioredis writes a PUBLISH at once, but sends the commands
    // queued while it was down only once ready: an event would overtake earlier ones. Such publishes wait
    // for the handshake to end and are sent then, in order (a room's feed order rests on it: see RoomSequencer).
    return this.events.publish(channel, event, (send) =>
      this.publisher.status === 'connect' || this.held.length > 0 ? this.afterHandshake(send) : send(),
    );
  }

  /**
   * `send`, once the handshake has ended. A handshake can last (Redis loading its data answers the ready
   * check with LOADING until done): past the command timeout the publish fails as a command that timed out
   * does and, as such a command, it is still sent in its place when the handshake ends (queued behind what
   * ioredis holds, which it drops if reconnecting keeps failing). Beyond MAX_HELD, a publish fails at once
   * and is not sent: a handshake of minutes must not end in a burst of stale events.
   */
  private afterHandshake(send: () => Promise<unknown>): Promise<unknown> {
    if (this.held.length >= MAX_HELD) return Promise.reject(new Error('Command timed out (too many publishes wait for the Redis handshake)'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('Command timed out (waiting for the Redis handshake)')), PUBLISH_TIMEOUT_MS);
      this.held.push(() => {
        clearTimeout(timer);
        const sent = send();
        // Once timed out, nobody awaits it: its failure is known already.
        sent.catch(() => {});
        resolve(sent);
      });
    });
  }

  /**
   * The handshake ended: sends the held publishes in order, with no await between, so nothing made later
   * goes first. Once ready, ioredis has already sent what it had queued; once closed, these queue behind it.
   */
  private releaseHeld(): void {
    for (const send of this.held.splice(0)) send();
  }

  listen<T>(channel: string, listener: Listener<T>): Promise<void> {
    return this.events.listen(channel, listener);
  }

  unlisten(channel: string, listener: Listener<unknown>): Promise<void> {
    return this.events.unlisten(channel, listener);
  }

  watchDelivery(watcher: DeliveryWatcher): void {
    this.events.watchDelivery(watcher);
  }

  unwatchDelivery(watcher: DeliveryWatcher): void {
    this.events.unwatchDelivery(watcher);
  }

  listeners(channel: string): number {
    return this.events.listeners(channel);
  }

  async ping(): Promise<void> {
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    await this.events.close();
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }
}
