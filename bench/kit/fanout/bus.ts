/**
 * The event bus a fan-out run goes through: one Redis (REDIS_URL, PUBLISH and
 * SUBSCRIBE) or a Redis Cluster (sharded pub/sub, SPUBLISH and SSUBSCRIBE).
 * Parley's instances, the relay floor and the bench's own publisher all use
 * the one the run names, so the contenders meet the same bus.
 */
import { Cluster, Redis } from 'ioredis';
import { parseClusterNodes } from '../../../src/pubsub/redis-cluster.js';

/** The single-Redis bus's name (its report also tells how its figures came to be). */
export const ONE_REDIS = 'one Redis';

export interface FanoutBus {
  /** How the report names it. */
  name: string;
  /** What Parley's instances are started with to use it. */
  env: Record<string, string>;
  /** What a relay process is started with to use it (read by relaySubscriber). */
  relayEnv: Record<string, string>;
  /** Publishes `payload`; resolves with the count of subscribers that heard it (on a cluster, of its shard). */
  publish(channel: string, payload: string): Promise<number>;
  close(): void;
}

export function oneRedis(url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): FanoutBus {
  const redis = new Redis(url);
  return {
    name: ONE_REDIS,
    env: { REDIS_URL: url },
    relayEnv: { RELAY_REDIS_URL: url },
    publish: (channel, payload) => redis.publish(channel, payload),
    close: () => redis.disconnect(),
  };
}

export function redisCluster(nodes: string): FanoutBus {
  const cluster = new Cluster(parseClusterNodes(nodes));
  return {
    name: `a Redis Cluster of ${nodes.split(',').length} masters`,
    env: { REDIS_CLUSTER_NODES: nodes },
    relayEnv: { RELAY_REDIS_CLUSTER_NODES: nodes },
    publish: async (channel, payload) => Number(await cluster.spublish(channel, payload)),
    close: () => cluster.disconnect(),
  };
}

/** In a relay process: calls `onPayload` with each payload published on `channel` of the bus its env names. */
export async function relaySubscriber(channel: string, onPayload: (payload: string) => void): Promise<() => void> {
  const nodes = process.env.RELAY_REDIS_CLUSTER_NODES;
  if (nodes) {
    const cluster = new Cluster(parseClusterNodes(nodes), { shardedSubscribers: true });
    cluster.on('smessage', (_channel: string, payload: string) => onPayload(payload));
    await cluster.ssubscribe(channel);
    return () => cluster.disconnect();
  }
  const redis = new Redis(process.env.RELAY_REDIS_URL!);
  redis.on('message', (_channel: string, payload: string) => onPayload(payload));
  await redis.subscribe(channel);
  return () => redis.disconnect();
}
