/** The one place that reads ioredis's sharded subscribers (5.11), which it keeps private: none of this has a public API. */
import type { Cluster, Redis } from 'ioredis';

/**
 * ioredis's Cluster with shardedSubscribers keeps one subscriber connection per master in a ClusterSubscriberGroup,
 * a private member of the Cluster, and says of it only `smessage`, `-subscriber`, `+subscriber` and
 * `subscribersReady`. ShardedRedisPubSub needs more to know when delivery is back and to get it back: each master's
 * connection (is it ready, a PING on it after its SSUBSCRIBEs), the channels that connection holds (ioredis's own
 * record, updated by Redis's answers, in the connection's private `condition`), and a way out of the group's wedged
 * reset (see ShardedRedisPubSub.rebuild). The public alternative is for the engine to hold its own connection per
 * master instead of ioredis's, and subscribe each again through topology changes itself. Every such read is here,
 * typed as ioredis 5.11 has it, so that an upgrade of ioredis has one file to check.
 */
interface SubscriberGroup {
  shardedSubscribers: Map<string, { getInstance(): Redis | null; readonly subscriberStatus: string }>;
  isResetting: boolean;
  pendingReset: unknown;
}

export class ShardedSubscribers {
  constructor(private readonly cluster: Cluster) {}

  private get group(): SubscriberGroup | undefined {
    return (this.cluster as unknown as { shardedSubscribers?: SubscriberGroup }).shardedSubscribers;
  }

  /** The subscriber connection of a master ("host:port"), or null while ioredis has none. */
  connectionOf(master: string): Redis | null {
    return this.group?.shardedSubscribers.get(master)?.getInstance() ?? null;
  }

  /** The sharded channels a subscriber connection holds (ioredis keeps them to subscribe again on reconnect). */
  static channelsOf(connection: Redis): string[] {
    const condition = (connection as unknown as { condition?: { subscriber?: { channels(kind: string): string[] } | false } }).condition;
    return condition?.subscriber ? condition.subscriber.channels('ssubscribe') : [];
  }

  /** Each master's subscriber as ioredis holds it: its state and its connection's, for the logs. */
  describe(masters: Iterable<string>): string {
    return [...masters]
      .map((master) => {
        const subscriber = this.group?.shardedSubscribers.get(master);
        return `${master} ${subscriber ? `${subscriber.subscriberStatus}/${subscriber.getInstance()?.status ?? 'none'}` : 'missing'}`;
      })
      .join(', ');
  }

  /**
   * Tells the group it is no longer resetting. A subscriber stopped while it connects (another reset, or a
   * disconnect, replacing it) loses the listeners that would settle that connect, so the reset waits for ever and
   * every later one is put off behind it: the group never makes a subscriber again.
   */
  endWedgedReset(): void {
    const group = this.group;
    if (group?.isResetting) {
      group.isResetting = false;
      group.pendingReset = null;
    }
  }
}
