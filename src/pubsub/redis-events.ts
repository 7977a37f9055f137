/** What the two Redis engines share (redis.ts on one Redis, redis-cluster.ts on a cluster), whatever carries their messages. */
import type { Logger } from 'pino';
import type { DeliveryWatcher, Listener } from './pubsub.js';
import { ChannelListeners, channelKind, type PubSubMeter } from './listeners.js';
import { DUPLICATE, EventStamp, HeardEvents } from './event-stamps.js';
import { MISSED_CHANNEL, MissedPublishes, missedSpan, type NoticeConnection } from './missed-publishes.js';
import { DeliveryState } from './delivery-state.js';
import { REDIS_STEP_MS } from './redis-connection.js';

/** How long a publish may wait for Redis's answer before it fails (it may still have run). */
export const PUBLISH_TIMEOUT_MS = REDIS_STEP_MS;
/** How long closing waits to send a notice of failed publishes still owed (missed-publishes.ts). */
const CLOSING_NOTICE_MS = 500;

/** The Redis channel of a pub/sub channel under a deployment's REDIS_PREFIX. */
export const redisEventChannel = (prefix: string, channel: string) => `${prefix}events:${channel}`;

/** What differs between the engines: the commands that carry a message, and that join and leave a channel. */
export interface RedisChannelCommands {
  /** PUBLISH or SPUBLISH of a message (JSON text). */
  send(redisChannel: string, message: string): Promise<unknown>;
  /** SUBSCRIBE or SSUBSCRIBE: resolves once Redis holds the channel for this instance. */
  subscribe(redisChannel: string): Promise<unknown>;
  /** Undoes what a refused subscribe() left behind in the client, if anything. */
  refused?(redisChannel: string): void;
  /** UNSUBSCRIBE or SUNSUBSCRIBE: never rejects (a failure is the engine's to handle). */
  unsubscribe(redisChannel: string): Promise<unknown> | void;
}

export interface RedisEventsOptions {
  /** Namespaces channels, so deployments (or test runs) sharing one Redis never hear each other. */
  prefix: string;
  logger: Logger;
  meter: PubSubMeter;
  commands: RedisChannelCommands;
  /** What a notice of failed publishes waits for before it is sent: the publisher connection, or the cluster. */
  noticeConnection: NoticeConnection;
  /**
   * A message that is not JSON reaches the listeners as the text it is (one Redis), instead of being dropped (a
   * cluster). No instance sends one.
   */
  deliverUnparsed?: boolean;
}

/** A channel's subscription while it has listeners here. */
interface Subscription {
  taken: Promise<unknown>;
  /** listen() calls awaiting it: the channel's last listener leaving meanwhile must not unsubscribe it under them. */
  joining: number;
  /** Redis has answered it: a channel still being subscribed is not held yet, and not lost either. */
  settled: boolean;
}

/**
 * An instance's events on Redis, as both engines carry them: stamped JSON on channels under the prefix (an event
 * that ioredis resends is heard once: event-stamps.ts), one subscription per channel however many listeners it has
 * here (ChannelListeners fans each event out), notices of failed publishes (missed-publishes.ts), and whether
 * delivery is live (delivery-state.ts). The engine says what carries the messages (RedisChannelCommands) and when
 * delivery is lost and back.
 */
export class RedisEvents {
  readonly delivery: DeliveryState;
  private readonly prefix: string;
  private readonly channels: ChannelListeners;
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly stamp = new EventStamp();
  private readonly heard = new HeardEvents();
  private readonly missed: MissedPublishes;

  constructor(private readonly options: RedisEventsOptions) {
    const { prefix, logger, meter, commands } = options;
    this.prefix = prefix;
    this.channels = new ChannelListeners(logger, meter);
    this.delivery = new DeliveryState(logger);
    this.missed = new MissedPublishes(
      (notice) => this.stamp.stamp(notice),
      (stamped) => commands.send(prefix + MISSED_CHANNEL, JSON.stringify(stamped)),
      options.noticeConnection,
      logger,
    );
  }

  /**
   * Publishes `event` through `transmit`, which calls `send` when the engine lets it go (at once, unless it holds
   * it: redis.ts). A failure is told to every instance (missed-publishes.ts), and rethrown.
   */
  async publish(channel: string, event: unknown, transmit: (send: () => Promise<unknown>) => Promise<unknown> = (send) => send()): Promise<void> {
    const madeAt = Date.now();
    const redisChannel = this.prefix + channel;
    // Stamped as it is sent, not as it is made: the numbers follow the wire's order (event-stamps.ts).
    const send = () => this.options.commands.send(redisChannel, JSON.stringify(this.stamp.stamp(event)));
    try {
      await transmit(send);
    } catch (err) {
      this.missed.failed(madeAt);
      throw err;
    }
    this.options.meter.eventPublished(channelKind(channel));
  }

  /** A message Redis delivered on `redisChannel`: an event for this instance's listeners, or a notice of failed publishes. */
  arrived(redisChannel: string, message: string): void {
    if (!redisChannel.startsWith(this.prefix)) return;
    const channel = redisChannel.slice(this.prefix.length);
    let arrival: unknown;
    try {
      arrival = JSON.parse(message);
    } catch {
      // Not JSON: not a notice, and an event only where the engine takes it as text.
      if (!this.options.deliverUnparsed || channel === MISSED_CHANNEL) return;
      arrival = message;
    }
    const event = this.heard.open(arrival);
    if (event === DUPLICATE) return;
    if (channel === MISSED_CHANNEL) {
      const span = missedSpan(event);
      if (span) this.delivery.eventsMissed(span.since, span.until);
      return;
    }
    this.channels.deliver(channel, event);
  }

  async listen<T>(channel: string, listener: Listener<T>): Promise<void> {
    let subscription = this.subscriptions.get(channel);
    if (!subscription) {
      subscription = { taken: this.options.commands.subscribe(this.prefix + channel), joining: 0, settled: false };
      this.subscriptions.set(channel, subscription);
    }
    subscription.joining += 1;
    try {
      await subscription.taken;
      subscription.settled = true;
    } catch (err) {
      // Refused (Redis down): a later listen() subscribes afresh.
      if (this.subscriptions.get(channel) === subscription) {
        this.subscriptions.delete(channel);
        this.options.commands.refused?.(this.prefix + channel);
      }
      throw err;
    } finally {
      subscription.joining -= 1;
    }
    this.channels.add(channel, listener as Listener<unknown>);
  }

  async unlisten(channel: string, listener: Listener<unknown>): Promise<void> {
    if (!this.channels.delete(channel, listener)) return;
    const subscription = this.subscriptions.get(channel);
    if (!subscription || subscription.joining > 0) return;
    this.subscriptions.delete(channel);
    await this.options.commands.unsubscribe(this.prefix + channel);
  }

  /**
   * The Redis channels this instance listens on: each channel with listeners, or being subscribed (unless
   * `settledOnly`), and the notices' channel, which it hears for its whole life.
   */
  redisChannels({ settledOnly = false } = {}): string[] {
    const channels = [...this.subscriptions].filter(([, subscription]) => !settledOnly || subscription.settled).map(([channel]) => channel);
    return [...channels, MISSED_CHANNEL].map((channel) => this.prefix + channel);
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

  /** Stops, once a notice of failed publishes still owed is sent (or CLOSING_NOTICE_MS have passed). */
  close(): Promise<void> {
    return this.missed.close(CLOSING_NOTICE_MS);
  }
}
