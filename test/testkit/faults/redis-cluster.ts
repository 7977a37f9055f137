/**
 * The kit of the Redis Cluster tests (test/live/redis-cluster*.test.ts): reading a room feed through faults (live
 * messages and interruption notices), posting under a fault while counting its window, catching up as a client
 * does, and asking the cluster itself who owns a slot: with redis-cli run apart and bounded, as the apps share the
 * test's process (a synchronous child process would stall them, and a stalled node would stall it).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { App } from '../../../src/app.js';
import { clusterNodes, startRedisCluster, stopRedisCluster, type RedisClusterOptions } from '../../../src/local-redis/cluster.js';
import { startApp, stopApp } from '../app.js';
import { REDIS_STEP_MS } from '../../../src/pubsub/redis-connection.js';
import { roomChannel } from '../../../src/resolvers/rooms/live/feed.js';
import { HistoryDocument, type RoomEventsSubscription } from '../../generated/graphql.js';
import { gqlOk } from '../http.js';
import { post } from '../data/rooms.js';
import type { TestUser } from '../data/users.js';
import type { Feed } from '../feeds.js';
import { eventually } from '../poll.js';

/** A test file's own Redis Cluster, on ports of its own, and two instances on it with a prefix of their own. */
export function ownRedisCluster(name: string, ports: number[], replicas = 0) {
  const cluster: RedisClusterOptions = { ports, replicas, dir: mkdtempSync(join(tmpdir(), `parley-redis-${name}-`)), log: () => {} };
  const prefix = `parley:${name}-test-${randomUUID().slice(0, 8)}:`;
  let apps: App[] = [];
  return {
    cluster,
    prefix,
    /** Starts the cluster (forgetting any earlier one on its ports), then the two instances. */
    async start(): Promise<[App, App]> {
      await startRedisCluster(cluster, { fresh: true });
      const env = { REDIS_CLUSTER_NODES: clusterNodes(cluster), REDIS_PREFIX: prefix };
      apps = await Promise.all([startApp({ env }), startApp({ env })]);
      return [apps[0]!, apps[1]!];
    },
    /** The instances first, while the cluster still answers them; then the cluster, and its files. */
    async stop(): Promise<void> {
      await Promise.all(apps.map((app) => stopApp(app)));
      stopRedisCluster(cluster);
      rmSync(cluster.dir, { recursive: true, force: true });
    },
  };
}

/**
 * The documented bound on a post while Redis, or a master, cannot be reached (docs/redis-cluster.md): two Redis
 * steps (its rate limit and its event) of REDIS_STEP_MS each, with room for a loaded machine.
 */
export const ANSWER_BOUND_MS = 2 * REDIS_STEP_MS + 1_500;

/** The Redis channel of a room's events, as an app with REDIS_PREFIX `prefix` names it. */
export const redisChannelOf = (prefix: string, room: string) => `${prefix}events:${roomChannel(room)}`;

type RoomEvent = RoomEventsSubscription['roomEvents'];

/** What a feed delivered: the messages delivered live, and the resume cursor of each interruption notice. */
export interface Seen {
  live: string[];
  resumeCursors: string[];
}

export const nothingSeen = (): Seen => ({ live: [], resumeCursors: [] });

/** Reads a feed until the message `untilId` is delivered live, gathering live messages and interruption notices. */
export async function readUntil(feed: Feed<RoomEventsSubscription>, untilId: string, seen: Seen): Promise<void> {
  for (;;) {
    const event: RoomEvent = (await feed.data(30_000)).roomEvents;
    if (event.__typename === 'FeedInterrupted') seen.resumeCursors.push(event.resumeCursor);
    else if (event.__typename === 'MessagePosted') {
      seen.live.push(event.message.id);
      if (event.message.id === untilId) return;
    } else throw new Error(`unexpected event ${event.__typename}`);
  }
}

/** Posts through `app` until one is delivered live on the feed (it goes on after a fault), each delivered once. */
export async function goesOnLive(app: App, poster: TestUser, room: string, feed: Feed<RoomEventsSubscription>, seen: Seen, content: string) {
  const after = await eventually(async () => {
    const message = await post(app, poster, room, content);
    await readUntil(feed, message.id, seen);
    return message;
  }, { timeoutMs: 60_000, intervalMs: 500, what: `a post (${content}) to be delivered live` });
  expect(seen.live.at(-1)).toBe(after.id);
  expect(new Set(seen.live).size).toBe(seen.live.length);
  return after;
}

/**
 * Waits until the feed has been told to catch up at least once (reading on, live messages included): an instance
 * learns of another's failed publishes by its notice, which may come after the feed is live again (the notice's
 * master was the one down), as docs/api.md allows.
 */
export async function untilTold(feed: Feed<RoomEventsSubscription>, seen: Seen): Promise<void> {
  while (seen.resumeCursors.length === 0) {
    const event: RoomEvent = (await feed.data(15_000)).roomEvents;
    if (event.__typename === 'FeedInterrupted') seen.resumeCursors.push(event.resumeCursor);
    else if (event.__typename === 'MessagePosted') seen.live.push(event.message.id);
    else throw new Error(`unexpected event ${event.__typename}`);
  }
}

/**
 * The message ids of a room read on `app` before `before` (or all), paged back 200 at a time, oldest first: every
 * one, or as far back as it takes to read each of `sought` (a client catching up stops at what it has).
 */
export async function storedIds(app: App, reader: TestUser, room: string, before?: string, sought?: string[]): Promise<string[]> {
  const ids: string[] = [];
  const missing = new Set(sought);
  for (let cursor = before; ; ) {
    const page = (await gqlOk(app, HistoryDocument, { roomName: room, last: 200, before: cursor }, reader.token)).room!.messages;
    ids.unshift(...page.edges.map((e) => e.node.id));
    for (const e of page.edges) missing.delete(e.node.id);
    if (!page.pageInfo.hasPreviousPage || page.edges.length === 0 || (sought && missing.size === 0)) return ids;
    cursor = page.pageInfo.startCursor!;
  }
}

/**
 * The posts of `posted` a client following the feed ends with each exactly once, keying by id as docs/api.md
 * says: those delivered live, and those read back from the last interruption's resume cursor. Fails when a post
 * came live twice, or is in neither.
 */
export async function expectEachOnce(app: App, reader: TestUser, room: string, seen: Seen, posted: string[]): Promise<{ live: number; caughtUp: number }> {
  expect(new Set(seen.live).size).toBe(seen.live.length);
  const missedLive = posted.filter((id) => !seen.live.includes(id));
  if (missedLive.length === 0) return { live: posted.length, caughtUp: 0 };
  expect(seen.resumeCursors.length).toBeGreaterThan(0);
  const caughtUp = await storedIds(app, reader, room, seen.resumeCursors.at(-1), missedLive);
  expect(missedLive.filter((id) => caughtUp.includes(id))).toEqual(missedLive);
  return { live: posted.length - missedLive.length, caughtUp: missedLive.length };
}

/** What posting under a fault came to: answered inside its window, failed, and past ANSWER_BOUND_MS. */
export interface Outcome {
  /** Posts started and answered while the window was open. */
  inside: string[];
  failed: string[];
  slow: number;
  slowest: number;
  /** Every post answered, inside the window or not. */
  ids: string[];
}

/**
 * Posts through `apps` in turn, one at a time in each of `loops` loops, while `window.open`: each post counted as
 * answered inside the window only if it started and was answered while the fault held, and as slow past `boundMs`.
 */
export async function postWhile(window: { open: boolean }, apps: App[], poster: TestUser, room: string, { loops = 1, boundMs = ANSWER_BOUND_MS } = {}): Promise<Outcome> {
  const outcome: Outcome = { inside: [], failed: [], slow: 0, slowest: 0, ids: [] };
  const loop = async (n: number) => {
    for (let i = n; window.open; i += loops) {
      const started = Date.now();
      try {
        const message = await post(apps[i % apps.length]!, poster, room, `during ${i}`);
        outcome.ids.push(message.id);
        if (window.open) outcome.inside.push(message.id);
      } catch (err) {
        outcome.failed.push((err as Error).message);
      }
      const took = Date.now() - started;
      outcome.slowest = Math.max(outcome.slowest, took);
      if (took > boundMs) outcome.slow += 1;
    }
  };
  await Promise.all(Array.from({ length: loops }, (_, n) => loop(n)));
  return outcome;
}

/**
 * The slowest of `loops` posts made at once through `apps` with nothing failing: a post's own work on this machine
 * now, which the bound on a post under a fault adds to its Redis steps (docs/redis-cluster.md).
 */
export async function ownWorkMs(apps: App[], poster: TestUser, room: string, loops: number): Promise<number> {
  const took = await Promise.all(
    Array.from({ length: loops }, async (_, i) => {
      const started = Date.now();
      await post(apps[i % apps.length]!, poster, room, `own work ${i}`);
      return Date.now() - started;
    }),
  );
  return Math.max(...took);
}

export const ready = async (app: App) => (await fetch(`${app.url}/ready`)).status === 200;

/** One node as a node of the cluster sees it (CLUSTER NODES). */
export interface ClusterNode {
  id: string;
  port: number;
  role: 'master' | 'replica';
  failed: boolean;
  /** The master's id, for a replica. */
  masterId: string | undefined;
  /** The slot ranges it serves, as [from, to]. */
  slots: Array<[number, number]>;
}

/** What redis-cli answers on `port`, or '' when the node does not answer within 2 s. */
async function redisCli(port: number, ...args: string[]): Promise<string> {
  try {
    return (await promisify(execFile)('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 2_000 })).stdout;
  } catch {
    return '';
  }
}

/** The cluster as the node on `port` sees it; empty when that node does not answer. */
export async function clusterNodesSeenBy(port: number): Promise<ClusterNode[]> {
  return (await redisCli(port, 'CLUSTER', 'NODES'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id, address, flags, master, , , , , ...ranges] = line.trim().split(' ');
      const roles = flags!.split(',');
      return {
        id: id!,
        port: Number(/:(\d+)@/.exec(address!)?.[1]),
        role: roles.includes('master') ? 'master' : 'replica',
        failed: roles.includes('fail') || roles.includes('fail?'),
        masterId: master === '-' ? undefined : master,
        slots: ranges.filter((range) => !range.startsWith('[')).map((range) => {
          const [from, to] = range.split('-').map(Number);
          return [from!, to ?? from!] as [number, number];
        }),
      };
    });
}

/** The slot of `key`, as the node on `port` computes it (NaN when it does not answer). */
export async function keySlotOf(port: number, key: string): Promise<number> {
  const answer = (await redisCli(port, 'CLUSTER', 'KEYSLOT', key)).trim();
  return answer === '' ? NaN : Number(answer);
}

/** The master that serves `slot` as the node on `port` sees it, and its replicas. */
export async function ownerOfSlot(port: number, slot: number): Promise<{ master: ClusterNode; replicas: ClusterNode[] } | undefined> {
  const nodes = await clusterNodesSeenBy(port);
  const master = nodes.find((node) => node.role === 'master' && node.slots.some(([from, to]) => slot >= from && slot <= to));
  return master && { master, replicas: nodes.filter((node) => node.masterId === master.id) };
}

/** The port of the master that serves `key`'s slot, as the first of `ports` that answers sees it. */
export async function ownerPort(ports: number[], key: string): Promise<number> {
  for (const port of ports) {
    const slot = await keySlotOf(port, key);
    const owner = Number.isInteger(slot) ? await ownerOfSlot(port, slot) : undefined;
    if (owner) return owner.master.port;
  }
  throw new Error(`no node of ${ports.join(', ')} says which master serves ${key}`);
}
