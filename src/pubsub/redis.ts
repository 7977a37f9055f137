import { RedisPubSub } from 'graphql-redis-subscriptions';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createRedis } from './redis-connection.js';
import type { DeliveryWatcher, Listener, PubSub } from './pubsub.js';
import { ChannelListeners, channelKind, type PubSubMeter } from './listeners.js';
import { DUPLICATE, EventStamp, HeardEvents } from './event-stamps.js';
import { MISSED_CHANNEL, MissedPublishes, missedSpan } from './missed-publishes.js';
import { DeliveryState } from './delivery-state.js';

/** How long a publish may wait for Redis's answer before it fails (it may still have run). */
const PUBLISH_TIMEOUT_MS = 1000;
/** How long closing waits to send a notice of failed publishes still owed (missed-publishes.ts). */
const CLOSING_NOTICE_MS = 500;
/** Publishes held through a handshake at most (see afterHandshake). */
const MAX_HELD = 10_000;

/**
 * What listen() reaches into graphql-redis-subscriptions for (2.7.0): its pending SUBSCRIBE of each channel, and
 * what it keeps of a subscription whose SUBSCRIBE failed (it keeps them all, for the process's life).
 */
interface EngineInternals {
  subsPendingRefsMap: Map<string, { pending: Promise<unknown> }>;
  currentSubscriptionId: number;
  subscriptionMap: Record<number, unknown>;
}

/** The Redis channel of a pub/sub channel under a deployment's REDIS_PREFIX. */
export const redisEventChannel = (prefix: string, channel: string) => `${prefix}events:${channel}`;

/**
 * Events through Redis with graphql-redis-subscriptions: a publisher and a
 * separate subscriber connection (a subscribed connection can run nothing else).
 * The engine holds one subscription per channel, however many listeners this
 * instance has on it; ChannelListeners fans each event out to them. Events
 * travel stamped with their publisher and its count, so one that ioredis
 * resends after a reconnect is heard once (event-stamps.ts).
 */
export class RedisBackedPubSub implements PubSub {
  private readonly engine: RedisPubSub;
  private readonly channels: ChannelListeners;
  /** The engine's subscription of each channel with a listener here, and how many listen() calls await it. */
  private readonly subscriptions = new Map<string, { id: Promise<number>; joining: number }>();
  private readonly stamp = new EventStamp();
  private readonly heard = new HeardEvents();
  private readonly missed: MissedPublishes;
  /**
   * Redis channels left while Redis was unreachable, whose UNSUBSCRIBE failed. ioredis, which marks a channel
   * left only when Redis answers, subscribes to them again as it reconnects: each is left again then, unless
   * this instance listens to it again by then (else Redis would send its events here for the process's life).
   */
  private readonly leftWhileDown = new Set<string>();
  private readonly delivery: DeliveryState;

  constructor(
    readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly logger: Logger,
    /** Namespaces channels, so deployments (or test runs) sharing one Redis never hear each other. */
    private readonly prefix: string,
    private readonly meter: PubSubMeter,
  ) {
    this.channels = new ChannelListeners(logger, meter);
    this.delivery = new DeliveryState(logger);
    // graphql-redis-subscriptions fires UNSUBSCRIBE/PUNSUBSCRIBE without handling their promises, and ioredis
    // resubscribes as it reconnects without handling those of SUBSCRIBE/PSUBSCRIBE; while Redis is down (or
    // during shutdown) those reject, and an unhandled rejection ends the process. Observe them here (a caller
    // that handles the promise still gets its rejection).
    for (const method of ['subscribe', 'psubscribe', 'unsubscribe', 'punsubscribe'] as const) {
      const original = subscriber[method].bind(subscriber) as (...args: unknown[]) => Promise<unknown>;
      (subscriber as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const owe = () => {
          if (method === 'unsubscribe') for (const arg of args) if (typeof arg === 'string') this.leftWhileDown.add(arg);
        };
        // Not ready: in its handshake ioredis writes an UNSUBSCRIBE to the new connection, where Redis answers it
        // and ioredis still subscribes again, once ready, to what the old connection had; or it drops it unanswered.
        if (subscriber.status !== 'ready') owe();
        const pending = original(...args);
        pending.catch((err: Error) => {
          logger.debug({ err: err.message, method }, 'redis (un)subscribe failed');
          owe();
        });
        return pending;
      };
    }
    // Before the PING below: once it is answered, these are left too.
    subscriber.on('ready', () => this.leaveAgain());
    // Delivery is live while the subscriber connection is up and resubscribed. ioredis resubscribes
    // every channel when it reconnects, before 'ready' is handled here; a PING sent now is answered
    // after those SUBSCRIBEs, so when it returns every listen() hears events again.
    subscriber.on('close', () => this.delivery.set(false));
    subscriber.on('ready', () => {
      subscriber.ping().then(
        () => this.delivery.set(true),
        (err: Error) => logger.debug({ err: err.message }, 'redis subscriber ping failed'),
      );
    });
    for (const handshakeEnded of ['ready', 'close'] as const) publisher.on(handshakeEnded, () => this.releaseHeld());
    this.engine = new RedisPubSub({
      publisher,
      subscriber,
      connectionListener: (err) => {
        if (err) logger.error({ err: err.message }, 'redis pub/sub connection error');
      },
    });
    this.missed = new MissedPublishes(
      (notice) => this.stamp.stamp(notice),
      (stamped) => this.engine.publish(prefix + MISSED_CHANNEL, stamped),
      publisher,
      logger,
    );
    this.listenForMissed();
  }

  /**
   * Hears every instance's notices of failed publishes (missed-publishes.ts), from start, for the instance's
   * life. Subscribed on the connection itself, not through the engine: the engine leaves a promise of its own
   * rejected, unhandled, when a SUBSCRIBE fails (Redis down at start), which would be retried here.
   */
  private listenForMissed(): void {
    const channel = this.prefix + MISSED_CHANNEL;
    this.subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      let notice: unknown;
      try {
        notice = this.heard.open(JSON.parse(message));
      } catch {
        return; // not JSON: not a notice
      }
      const span = notice === DUPLICATE ? undefined : missedSpan(notice);
      if (span) this.delivery.eventsMissed(span.since, span.until);
    });
    const subscribe = () =>
      this.subscriber.subscribe(channel).catch((err: Error) => {
        // Refused (Redis down at start): subscribed again once the subscriber connection is back; ioredis
        // subscribes again by itself, on each reconnect, to what it was subscribed to.
        this.logger.warn({ err: err.message }, 'not yet listening for missed publishes; trying again when Redis is back');
        this.subscriber.once('ready', () => void subscribe());
      });
    void subscribe();
  }

  static connect(url: string, logger: Logger, prefix: string, meter: PubSubMeter): RedisBackedPubSub {
    return new RedisBackedPubSub(
      createRedis(url, logger, 'publisher', { commandTimeoutMs: PUBLISH_TIMEOUT_MS }),
      // No command timeout: a subscribed connection waits for messages by design.
      createRedis(url, logger, 'subscriber'),
      logger,
      redisEventChannel(prefix, ''),
      meter,
    );
  }

  /**
   * Publishes made while the publisher connection is in its handshake, each a
   * function that sends it: see publish().
   */
  private readonly held: Array<() => void> = [];

  async publish(channel: string, event: unknown): Promise<void> {
    const madeAt = Date.now();
    // Stamped as it is sent: held publishes go out after those queued before them, and are numbered so.
    const send = () => this.engine.publish(this.prefix + channel, this.stamp.stamp(event));
    // In its handshake (connected, not yet ready) ioredis writes a PUBLISH at once, but sends the commands
    // queued while it was down only once ready: an event would overtake earlier ones. Such publishes wait
    // for the handshake to end and are sent then, in order (a room's feed order rests on it: see RoomSequencer).
    try {
      await (this.publisher.status === 'connect' || this.held.length > 0 ? this.afterHandshake(send) : send());
    } catch (err) {
      this.missed.failed(madeAt);
      throw err;
    }
    this.meter.eventPublished(channelKind(channel));
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

  /** Leaves again, once Redis is back, the channels whose UNSUBSCRIBE failed while it was not (leftWhileDown). */
  private leaveAgain(): void {
    const owed = [...this.leftWhileDown].filter((trigger) => !this.subscriptions.has(trigger.slice(this.prefix.length)));
    this.leftWhileDown.clear();
    // Through the wrapper above: if this fails too, they are owed again.
    if (owed.length > 0) void this.subscriber.unsubscribe(...owed);
  }

  async listen<T>(channel: string, listener: Listener<T>): Promise<void> {
    let subscription = this.subscriptions.get(channel);
    if (!subscription) {
      const trigger = this.prefix + channel;
      const engine = this.engine as unknown as EngineInternals;
      const engineId = engine.currentSubscriptionId;
      const id = this.engine.subscribe(trigger, (arrival: unknown) => {
        const event = this.heard.open(arrival);
        if (event !== DUPLICATE) this.channels.deliver(channel, event);
      });
      // When the SUBSCRIBE fails (Redis down), graphql-redis-subscriptions also rejects a promise of its own that
      // nobody awaits: observed here, since an unhandled rejection ends the process (the caller gets `id`'s).
      engine.subsPendingRefsMap.get(trigger)?.pending.catch(() => {});
      // And it keeps the refused subscription, its listener with it: forgotten here, as a later listen() starts afresh.
      // (Its empty set of references stays: a later subscribe of the channel reuses it.)
      id.catch(() => delete engine.subscriptionMap[engineId]);
      subscription = { id, joining: 0 };
      this.subscriptions.set(channel, subscription);
    }
    // Counted while awaited, so the channel's last listener leaving meanwhile does not unsubscribe it under us.
    subscription.joining += 1;
    try {
      await subscription.id;
    } catch (err) {
      // Refused (Redis down): a later listen() subscribes afresh.
      if (this.subscriptions.get(channel) === subscription) this.subscriptions.delete(channel);
      throw err;
    } finally {
      subscription.joining -= 1;
    }
    this.channels.add(channel, listener);
  }

  async unlisten(channel: string, listener: Listener<unknown>): Promise<void> {
    if (!this.channels.delete(channel, listener)) return;
    const subscription = this.subscriptions.get(channel);
    if (!subscription || subscription.joining > 0) return;
    this.subscriptions.delete(channel);
    this.engine.unsubscribe(await subscription.id);
  }

  watchDelivery(watcher: DeliveryWatcher): void {
    this.delivery.watch(watcher);
  }

  unwatchDelivery(watcher: DeliveryWatcher): void {
    this.delivery.unwatch(watcher);
  }

  listeners(channel: string): number {
    return this.channels.count(channel);
  }

  async ping(): Promise<void> {
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    await this.missed.close(CLOSING_NOTICE_MS);
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }
}
