/** The pub/sub engine on a Redis Cluster: SPUBLISH and SSUBSCRIBE, one subscriber connection per master. */
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { DeliveryWatcher, Listener, PubSub } from './pubsub.js';
import type { PubSubMeter } from './listeners.js';
import { MISSED_CHANNEL } from './missed-publishes.js';
import { PUBLISH_TIMEOUT_MS, RedisEvents, redisEventChannel } from './redis-events.js';
import { keySlot } from './key-slot.js';
import { CONNECTION_DEFAULTS, REDIS_STEP_MS } from './redis-connection.js';
import { MasterBreaker, mastersByKey } from './redis-steps.js';
import { ShardedSubscribers } from './sharded-subscribers.js';

/** How often ioredis reads the cluster's slots: a moved slot's lost subscriptions are found within this. */
export const SLOTS_REFRESH_MS = 1000;

/**
 * How long a listen() waits for the cluster to be ready before it fails: commands never queue while it is not
 * (enableOfflineQueue is off), so a subscription waits here, boundedly. Until the cluster was first ready (an
 * instance starting), it waits up to FIRST_READY_WAIT_MS instead.
 */
const READY_WAIT_MS = REDIS_STEP_MS;
const FIRST_READY_WAIT_MS = 60_000;

/** How often delivery is looked at while it is lost. */
const CHECK_MS = 250;
/** How often a live instance makes sure, in memory, that each channel is still held by its master's subscriber. */
const AUDIT_MS = 1000;
/**
 * Delivery lost this long while the cluster has been ready, and since the slots last moved: ioredis's subscriber
 * connections are not coming back by themselves (as after repeated whole-cluster outages), so every connection of
 * the cluster is rebuilt. A failover takes about as long (the cluster's node timeout, an election, then ioredis's
 * next look at the slots), and only then does ioredis connect a subscriber to the new master: the wait starts again
 * from the move, so that a rebuild never cuts that connect short.
 */
const REBUILD_AFTER_MS = 5000;
/** Delivery lost for longer than this fails readiness: an operator should look. */
const STUCK_MS = 30_000;

/** Parses REDIS_CLUSTER_NODES: "host:port,host:port". */
export function parseClusterNodes(value: string): Array<{ host: string; port: number }> {
  return value.split(',').map((entry) => {
    const [host, port] = entry.trim().split(':');
    if (!host || !port || !/^\d+$/.test(port)) throw new Error(`REDIS_CLUSTER_NODES: "${entry.trim()}" is not host:port`);
    return { host, port: Number(port) };
  });
}

/**
 * Events through a Redis Cluster with sharded pub/sub (Redis 7's SPUBLISH and
 * SSUBSCRIBE): a channel lives on the shard that owns its slot, so each shard
 * carries its own channels' events, where classic PUBLISH would cross the
 * cluster bus to every node. ioredis's Cluster with shardedSubscribers holds
 * one subscriber connection per master and subscribes again after a topology
 * change; this engine adds what the single-Redis one gives, through what both
 * share (redis-events.ts): an event once across reconnects (its stamp),
 * interruptions told to every feed, and failed publishes told to every
 * instance (missed-publishes.ts).
 *
 * When delivery counts as lost: a subscriber or node connection closing (a
 * master died, or the network cut), and any change of which master owns which
 * slot (a reshard or a failover: Redis ends the subscriptions of a moved slot
 * without a word to ioredis, so events published from the move until
 * ioredis's next look at the slots are lost to them). ioredis looks every
 * SLOTS_REFRESH_MS, so a change counts as lost from one look before it was
 * seen. Delivery is back once every subscriber connection is up again and has
 * answered a PING sent after its subscriptions. What that takes of ioredis's
 * subscriber connections, which it keeps private, is read in
 * sharded-subscribers.ts alone.
 */
export class ShardedRedisPubSub implements PubSub {
  private readonly events: RedisEvents;
  private readonly subscribers: ShardedSubscribers;
  private slotsSeen: string | undefined;
  private lastSlotsCheck = Date.now();
  /** When the slots were last seen to move to another master (a reshard, a failover). */
  private lastSlotsMove = 0;
  private checking: Promise<void> | undefined;
  private closed = false;
  private recheck: NodeJS.Timeout | undefined;
  /** Bumped by each loss: a look at the subscribers that began before one does not count. */
  private generation = 0;
  private lastSubscribeAgain = 0;
  private everReady = false;
  private readySince = 0;
  private lastRebuild = 0;
  private readonly audit: NodeJS.Timeout;
  /** Bounds the commands a request waits on, per master: the rate limiter and presence on this cluster use it too. */
  readonly steps: MasterBreaker;

  constructor(
    readonly cluster: Cluster,
    private readonly logger: Logger,
    /** Namespaces channels, so deployments (or test runs) sharing one cluster never hear each other. */
    private readonly prefix: string,
    meter: PubSubMeter,
  ) {
    this.steps = new MasterBreaker(cluster);
    this.subscribers = new ShardedSubscribers(cluster);
    this.events = new RedisEvents({
      prefix,
      logger,
      meter,
      noticeConnection: cluster,
      commands: {
        send: (redisChannel, message) => this.steps.run(redisChannel, () => cluster.spublish(redisChannel, message), PUBLISH_TIMEOUT_MS),
        subscribe: (redisChannel) => this.untilReady().then(() => cluster.ssubscribe(redisChannel)),
        // ioredis keeps a channel it was asked for, and subscribes to it again on each topology change.
        refused: (redisChannel) => void cluster.sunsubscribe(redisChannel).catch(() => undefined),
        // A failed SUNSUBSCRIBE (the shard down) leaves nothing behind that matters: a reconnect starts afresh
        // from ioredis's list of channels, which no longer holds it.
        unsubscribe: (redisChannel) => cluster.sunsubscribe(redisChannel).catch(() => undefined),
      },
    });
    cluster.on('smessage', (channel: string, message: string) => this.events.arrived(channel, message));
    // A connection lost: a master died or the network cut. Events may be missed from now.
    cluster.on('-node', () => this.lost(new Date()));
    cluster.on('-subscriber', () => this.lost(new Date()));
    cluster.on('refresh', () => this.slotsRead());
    cluster.on('subscribersReady', () => this.check());
    cluster.on('ready', () => {
      this.everReady = true;
      this.readySince = Date.now();
      void this.check();
    });
    cluster.on('error', (err: Error) => logger.debug({ err: err.message }, 'redis cluster error'));
    void this.listenForMissed();
    this.audit = setInterval(() => this.auditSubscribers(), AUDIT_MS);
    this.audit.unref();
  }

  static connect(nodes: string, logger: Logger, prefix: string, meter: PubSubMeter): ShardedRedisPubSub {
    const cluster = new Cluster(parseClusterNodes(nodes), {
      shardedSubscribers: true,
      slotsRefreshInterval: SLOTS_REFRESH_MS,
      // While the cluster is not ready (every master gone, or not yet reached), a command fails at once instead of
      // waiting in ioredis's offline queue for as long as the outage lasts: a post must not wait for the limiter.
      // Once ready, a command to a lost master fails within the node connection's commandTimeout.
      enableOfflineQueue: false,
      clusterRetryStrategy: (times) => Math.min(100 * 2 ** times, 2000),
      redisOptions: { ...CONNECTION_DEFAULTS, connectionName: 'parley', commandTimeout: PUBLISH_TIMEOUT_MS },
    });
    return new ShardedRedisPubSub(cluster, logger, redisEventChannel(prefix, ''), meter);
  }

  /** Hears every instance's notices of failed publishes for the instance's life (subscribed again until it is). */
  private async listenForMissed(): Promise<void> {
    for (let pause = 100; ; pause = Math.min(pause * 2, 2000)) {
      try {
        await this.cluster.ssubscribe(this.prefix + MISSED_CHANNEL);
        return;
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'not yet listening for missed publishes; trying again');
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
        if (this.cluster.status === 'end') return;
      }
    }
  }

  private lost(since: Date): void {
    this.generation += 1;
    this.events.delivery.set(false, since);
    // Checked again once the cluster says its subscribers are back; and now, in case they already are.
    void this.check();
  }

  /**
   * The slots as ioredis just read them: a change of owner loses the subscriptions of the moved slots (Redis
   * ends them without telling ioredis), from as early as the look before this one.
   */
  private slotsRead(): void {
    const slots = JSON.stringify(this.slotOwners());
    const previousCheck = this.lastSlotsCheck;
    this.lastSlotsCheck = Date.now();
    if (this.slotsSeen !== undefined && slots !== this.slotsSeen) {
      this.logger.info('redis cluster slots moved; feeds catch up');
      this.lastSlotsMove = Date.now();
      this.lost(new Date(previousCheck - SLOTS_REFRESH_MS));
    }
    this.slotsSeen = slots;
  }

  /**
   * Live again once the subscriber connection of each channel's master (the missed-publish notices' included) is
   * ready, has answered a PING, and holds the channel; looked at again every CHECK_MS while it is not. A loss
   * during a look makes it look again.
   */
  private check(): Promise<void> {
    if (this.checking || this.events.delivery.isLive || this.closed) return this.checking ?? Promise.resolve();
    const generation = this.generation;
    const again = (waiting: string) => {
      this.checking = undefined;
      if (this.closed) return;
      this.logger.debug({ waiting }, 'redis cluster: subscribers not back yet');
      if (this.recheck) return;
      this.recheck = setTimeout(() => {
        this.recheck = undefined;
        void this.check();
      }, CHECK_MS);
      this.recheck.unref();
    };
    this.checking = this.subscribersBack().then(
      (back) => {
        if (back !== true) return again(back);
        if (generation !== this.generation) return again('a loss during the look');
        this.checking = undefined;
        if (!this.closed) this.events.delivery.set(true);
      },
      (err: Error) => again(err.message),
    );
    return this.checking;
  }

  /** The channels (with the prefix) each ready subscriber connection should hold, and those whose master's is not ready. */
  private channelHolders({ settledOnly = false } = {}): { byConnection: Map<Redis, string[]>; unserved: number } {
    const owners = this.slotOwners();
    const byConnection = new Map<Redis, string[]>();
    let unserved = 0;
    for (const prefixed of this.events.redisChannels({ settledOnly })) {
      const owner = owners[keySlot(prefixed)];
      const connection = owner ? this.subscribers.connectionOf(owner) : null;
      if (!connection || connection.status !== 'ready') unserved += 1;
      else byConnection.set(connection, [...(byConnection.get(connection) ?? []), prefixed]);
    }
    return { byConnection, unserved };
  }

  /** Each master's subscriber as ioredis holds it: its state and its connection's, for the logs. */
  private subscriberStates(): string {
    return this.subscribers.describe(new Set(this.slotOwners().filter((owner): owner is string => Boolean(owner))));
  }

  /** The channels a ready subscriber connection should hold and does not. */
  private static unheld(byConnection: Map<Redis, string[]>): string[] {
    return [...byConnection].flatMap(([connection, channels]) => {
      const held = new Set(ShardedSubscribers.channelsOf(connection));
      return channels.filter((channel) => !held.has(channel));
    });
  }

  /** True once every channel's master's subscriber connection is back and holds it; else what is awaited. */
  private async subscribersBack(): Promise<true | string> {
    if (this.cluster.status !== 'ready') return `the cluster (${this.cluster.status})`;
    const { byConnection, unserved } = this.channelHolders();
    if (unserved > 0) return `${unserved} channel(s) whose master's subscriber is not ready (${this.subscriberStates()})`;
    // Answered after every command sent before it on the same connection (the SSUBSCRIBEs ioredis sent again).
    await Promise.all([...byConnection.keys()].map((connection) => connection.ping()));
    const missing = ShardedRedisPubSub.unheld(byConnection);
    if (missing.length === 0) return true;
    this.subscribeAgain(missing);
    return `${missing.length} channel(s) to be subscribed again`;
  }

  /**
   * Once a second: probes the masters that failed a request's step (MasterBreaker). While delivery counts as
   * live, a channel no longer held by a ready subscriber of its master (a connection that ended without an event
   * ioredis passes on) counts as lost since the last audit. While it is
   * lost with the cluster ready and the slots unmoved for REBUILD_AFTER_MS, every connection is rebuilt: ioredis
   * makes new subscriber connections for the masters on reconnecting, and subscribes them to every channel again.
   */
  private auditSubscribers(): void {
    if (this.closed) return;
    void this.steps.probe();
    const now = Date.now();
    if (this.events.delivery.isLive) {
      if (this.cluster.status === 'ready') {
        // A channel still being subscribed is not held yet, and not lost either.
        const { byConnection, unserved } = this.channelHolders({ settledOnly: true });
        const unheld = unserved + ShardedRedisPubSub.unheld(byConnection).length;
        if (unheld > 0) {
          this.logger.warn({ channels: unheld }, 'redis cluster: channels no longer held by a subscriber; feeds catch up');
          this.lost(new Date(now - AUDIT_MS));
        }
      }
      return;
    }
    const lostSince = this.events.delivery.lostSince ?? now;
    const stuckFrom = Math.max(lostSince, this.readySince, this.lastRebuild, this.lastSlotsMove);
    if (this.cluster.status === 'ready' && now - stuckFrom > REBUILD_AFTER_MS) {
      this.lastRebuild = now;
      this.logger.warn({ lostForMs: now - lostSince, subscribers: this.subscriberStates() }, 'redis cluster: subscribers not back; rebuilding every connection');
      this.rebuild();
    }
  }

  /**
   * Every connection to the cluster closed and opened again. ioredis's subscriber group replaces its subscribers one
   * reset at a time, and a reset waits for each new subscriber's connect; one that can wait for ever
   * (ShardedSubscribers.endWedgedReset) is ended first, so that the rebuild makes every subscriber anew.
   */
  private rebuild(): void {
    this.subscribers.endWedgedReset();
    this.cluster.disconnect(true);
  }

  /**
   * ioredis subscribes a master's channels again after a topology change, and only logs a failure (a timeout, a
   * MOVED answer): channels still missing on their master are asked for again, at most once a second.
   */
  private subscribeAgain(channels: string[]): void {
    if (Date.now() - this.lastSubscribeAgain < 1000) return;
    this.lastSubscribeAgain = Date.now();
    this.logger.warn({ channels: channels.length }, 'redis cluster: subscribing again to channels their master does not hold');
    for (const channel of channels) void this.cluster.ssubscribe(channel).catch(() => undefined);
  }

  /** The master ("host:port") that owns each slot, as ioredis last read the cluster's slot map. */
  private slotOwners(): Array<string | undefined> {
    // Sparse: a slot no master serves has no entry.
    return (this.cluster.slots as Array<string[] | undefined>).map((nodes) => nodes?.[0]);
  }

  /** Resolves once the cluster is ready, or fails as a command to an unreachable cluster does past the wait. */
  private async untilReady(): Promise<void> {
    if (this.cluster.status === 'ready') return;
    const waitMs = this.everReady ? READY_WAIT_MS : FIRST_READY_WAIT_MS;
    let timer: NodeJS.Timeout | undefined;
    let onReady: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        onReady = resolve;
        this.cluster.once('ready', onReady);
        timer = setTimeout(() => reject(new Error(`Cluster isn't ready (${this.cluster.status}) after ${waitMs} ms`)), waitMs);
      });
    } finally {
      clearTimeout(timer);
      if (onReady) this.cluster.off('ready', onReady);
    }
  }

  publish(channel: string, event: unknown): Promise<void> {
    return this.events.publish(channel, event);
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

  /**
   * Every master that owns slots answers (a shard down fails readiness, as one Redis down does), and delivery has
   * not been lost for longer than STUCK_MS (channels that cannot be subscribed again).
   */
  async ping(): Promise<void> {
    if (this.cluster.status !== 'ready') throw new Error(`Connection is closed (the Redis Cluster is ${this.cluster.status})`);
    const lostSince = this.events.delivery.lostSince;
    if (lostSince !== undefined && Date.now() - lostSince > STUCK_MS) throw new Error('Connection is closed (redis cluster: delivery lost for too long)');
    const owners = new Set(this.slotOwners().filter((owner): owner is string => Boolean(owner)));
    const masters = mastersByKey(this.cluster);
    // Each ping's failure is a rejection of its own (an async function never throws synchronously), so none is
    // left unhandled when another master has already failed the check.
    await Promise.all(
      [...owners].map(async (owner) => {
        const node = masters.get(owner);
        if (!node) throw new Error(`Connection is closed (redis cluster: no connection to ${owner})`);
        return node.ping();
      }),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.recheck);
    clearInterval(this.audit);
    await this.events.close();
    this.cluster.disconnect();
  }
}
