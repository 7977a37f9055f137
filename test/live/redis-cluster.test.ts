/**
 * Live feeds through a Redis Cluster of three masters (sharded pub/sub), with two app instances: events across
 * instances in order and once, channels spread over the shards, a master killed and restarted, and a master's
 * slots moved to another while feeds are open. The cluster is this file's own, on ports of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from 'ioredis';
import { pino } from 'pino';
import type { App } from '../../src/app.js';
import { HistoryDocument, InboxEventsDocument, RoomEventsDocument, type RoomEventsSubscription } from '../generated/graphql.js';
import { startApp, stopApp } from '../testkit/app.js';
import { gqlOk } from '../testkit/http.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { post, roomWith, uniqueRoomName } from '../testkit/data/rooms.js';
import { send } from '../testkit/data/messenger.js';
import { inboxFeed, roomFeed, type Feed } from '../testkit/feeds.js';
import { eventually } from '../testkit/poll.js';
import { clusterNodes, startMaster, startRedisCluster, stopMaster, stopRedisCluster, untilClusterOk, type RedisClusterOptions } from '../../src/local-redis/cluster.js';
import { ShardedRedisPubSub } from '../../src/pubsub/redis-cluster.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';

const cluster: RedisClusterOptions = {
  ports: [7111, 7112, 7113],
  dir: mkdtempSync(join(tmpdir(), 'parley-redis-cluster-')),
  log: () => {},
};
const PREFIX = `parley:cluster-test-${randomUUID().slice(0, 8)}:`;
const NO_METER = { eventPublished: () => {}, eventDelivered: () => {} };

let a: App;
let b: App;
/** A client of the cluster of the test's own, to ask which master holds what. */
let admin: Cluster;

beforeAll(async () => {
  await startRedisCluster(cluster, { fresh: true });
  const env = { REDIS_CLUSTER_NODES: clusterNodes(cluster), REDIS_PREFIX: PREFIX };
  [a, b] = await Promise.all([startApp({ env }), startApp({ env })]);
  admin = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0]! }], { slotsRefreshInterval: 500 });
  await admin.ping();
});

afterAll(async () => {
  // The apps first, while the cluster still answers them.
  await Promise.all([a, b].filter(Boolean).map((app) => stopApp(app)));
  admin?.disconnect();
  stopRedisCluster(cluster);
  rmSync(cluster.dir, { recursive: true, force: true });
});

/** The Redis channel of a room's events, as the app names it. */
const redisChannelOf = (room: string) => `${PREFIX}events:${roomChannel(room)}`;

/** The port of the master that owns `key`'s slot now. */
async function ownerPort(key: string): Promise<number> {
  const slot = (await admin.cluster('KEYSLOT', key)) as number;
  const slots = await admin.cluster('SLOTS');
  const range = slots.find(([from, to]) => slot >= from && slot <= to);
  return range![2]![1];
}

/** The cluster node id of the master on `port`. */
function nodeId(port: number): string {
  return spawnSync('redis-cli', ['-p', String(port), 'CLUSTER', 'MYID'], { encoding: 'utf8' }).stdout.trim();
}

type RoomEvent = RoomEventsSubscription['roomEvents'];

/**
 * Reads a feed until the message `untilId` is delivered live, gathering what came: the messages delivered live,
 * and the resume cursor of each interruption notice.
 */
async function readUntil(feed: Feed<RoomEventsSubscription>, untilId: string, seen: { live: string[]; resumeCursors: string[] }) {
  for (;;) {
    const event: RoomEvent = (await feed.data(30_000)).roomEvents;
    if (event.__typename === 'FeedInterrupted') seen.resumeCursors.push(event.resumeCursor);
    else if (event.__typename === 'MessagePosted') {
      seen.live.push(event.message.id);
      if (event.message.id === untilId) return;
    } else throw new Error(`unexpected event ${event.__typename}`);
  }
}

/** Posts on A until one is delivered live on the feed (it goes on after a fault), each delivered once. */
async function goesOnLive(poster: TestUser, room: string, feed: Feed<RoomEventsSubscription>, seen: { live: string[]; resumeCursors: string[] }, content: string) {
  const after = await eventually(async () => {
    const message = await post(a, poster, room, content);
    await readUntil(feed, message.id, seen);
    return message;
  }, { timeoutMs: 60_000, intervalMs: 500, what: `a post (${content}) to be delivered live` });
  expect(seen.live.at(-1)).toBe(after.id);
  expect(new Set(seen.live).size).toBe(seen.live.length);
}

/** The ids a client catching up from an interruption's resume cursor reads on B, `last` of them. */
async function caughtUpFrom(reader: TestUser, room: string, resumeCursor: string, last: number): Promise<string[]> {
  const page = (await gqlOk(b, HistoryDocument, { roomName: room, last, before: resumeCursor }, reader.token)).room!.messages;
  return page.edges.map((e) => e.node.id);
}

describe('a Redis Cluster (sharded pub/sub) under two instances', () => {
  it('carries room and inbox events from A to subscribers on B, in order, each once', async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const feed = await roomFeed(b, reader.token, RoomEventsDocument, { roomName: room });
    const inbox = await inboxFeed(b, reader, InboxEventsDocument);

    const posted: string[] = [];
    for (let i = 0; i < 40; i++) posted.push((await post(a, poster, room, `message ${i}`)).id);
    const sent: string[] = [];
    for (let i = 0; i < 10; i++) sent.push((await send(a, poster, reader, `direct ${i}`)).id);

    const heard: string[] = [];
    while (heard.length < posted.length) {
      const event = (await feed.data()).roomEvents;
      expect(event.__typename).toBe('MessagePosted');
      heard.push((event as Extract<RoomEvent, { __typename: 'MessagePosted' }>).message.id);
    }
    expect(heard).toEqual(posted);
    const received: string[] = [];
    while (received.length < sent.length) {
      const event = (await inbox.data()).inboxEvents;
      if (event.__typename === 'DirectMessageReceived') received.push(event.message.id);
    }
    expect(received).toEqual(sent);
    // Each once: nothing more is pending on either feed once a last event has come.
    const last = await post(a, poster, room, 'last');
    expect((await feed.data()).roomEvents).toMatchObject({ __typename: 'MessagePosted', message: { id: last.id } });
    expect(feed.pending()).toBe(0);
  });

  it('spreads the channels of 1,000 rooms over every shard, none holding more than 45 % of them', async () => {
    const events = ShardedRedisPubSub.connect(clusterNodes(cluster), pino({ level: 'silent' }), `${PREFIX}spread:`, NO_METER);
    try {
      const rooms = Array.from({ length: 1000 }, () => uniqueRoomName('spread'));
      await Promise.all(rooms.map((room) => events.listen(roomChannel(room), { onEvent: () => {} })));
      const perShard = cluster.ports.map((port) => {
        const out = spawnSync('redis-cli', ['-p', String(port), 'PUBSUB', 'SHARDCHANNELS', `${PREFIX}spread:events:room.*`], { encoding: 'utf8' }).stdout;
        return out.split('\n').filter((line) => line.trim() !== '').length;
      });
      expect(perShard.reduce((sum, n) => sum + n, 0)).toBe(1000);
      for (const count of perShard) {
        expect(count).toBeGreaterThan(0);
        expect(count).toBeLessThanOrEqual(450);
      }
      console.log(`[redis-cluster] 1,000 room channels over 3 shards: ${perShard.join(' / ')}`);
    } finally {
      await events.close();
    }
  });

  it("one master killed under a room feed: posts are stored, the feed gets every event or is told to catch up, once each, and goes on when it is back", async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const feed = await roomFeed(b, reader.token, RoomEventsDocument, { roomName: room });
    const port = await ownerPort(redisChannelOf(room));
    const seen = { live: [] as string[], resumeCursors: [] as string[] };
    const before = await post(a, poster, room, 'before');
    await readUntil(feed, before.id, seen);

    stopMaster(port);
    const during: string[] = [];
    for (let i = 0; i < 5; i++) during.push((await post(a, poster, room, `while its shard is down ${i}`)).id);
    // Not ready while a master is down, on either instance.
    await eventually(async () => (await fetch(`${b.url}/ready`)).status === 503, { what: 'B to say it is not ready' });
    await startMaster(cluster, port);
    await untilClusterOk(cluster);
    await eventually(async () => (await fetch(`${a.url}/ready`)).status === 200, { timeoutMs: 30_000, what: 'A to be ready again' });

    // Delivered live, or told to catch up; the feed goes on live once the shard is back.
    await goesOnLive(poster, room, feed, seen, 'after');
    const missedLive = during.filter((id) => !seen.live.includes(id));
    if (missedLive.length > 0) {
      expect(seen.resumeCursors.length).toBeGreaterThan(0);
      const caughtUp = await caughtUpFrom(reader, room, seen.resumeCursors[0]!, 100);
      expect(during.filter((id) => caughtUp.includes(id))).toEqual(during);
    }
    console.log(`[redis-cluster] master ${port} killed: ${during.length - missedLive.length} of ${during.length} live, ${seen.resumeCursors.length} interruption notice(s)`);
  });

  it("a master's slots moved to another master under a room feed: the feed gets every event or is told to catch up, and goes on", async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const feed = await roomFeed(b, reader.token, RoomEventsDocument, { roomName: room });
    const from = await ownerPort(redisChannelOf(room));
    const to = cluster.ports.find((p) => p !== from)!;
    const seen = { live: [] as string[], resumeCursors: [] as string[] };
    const before = await post(a, poster, room, 'before');
    await readUntil(feed, before.id, seen);

    // Posts go on while the slots move (redis-cli runs apart: the apps share this process).
    const slots = countSlots(from);
    let moving = true;
    const moved = reshard(from, to, slots).finally(() => (moving = false));
    const during: string[] = [];
    // Paced, so that one catch-up page (200) holds what a notice covers: a burst beyond it is the client's paging.
    while (moving && during.length < 190) {
      during.push((await post(a, poster, room, `while the slots move ${during.length}`)).id);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await moved;
    expect(await ownerPort(redisChannelOf(room))).toBe(to);

    await goesOnLive(poster, room, feed, seen, 'after the move');
    const missedLive = during.filter((id) => !seen.live.includes(id));
    if (missedLive.length > 0) {
      expect(seen.resumeCursors.length).toBeGreaterThan(0);
      const caughtUp = await caughtUpFrom(reader, room, seen.resumeCursors[0]!, 200);
      expect(missedLive.filter((id) => caughtUp.includes(id))).toEqual(missedLive);
    }
    // Moved back, so the shards are even again for whatever runs next.
    await reshard(to, from, slots);
    console.log(`[redis-cluster] ${slots} slots moved from ${from} to ${to} under ${during.length} posts: ${during.length - missedLive.length} live, ${seen.resumeCursors.length} interruption notice(s)`);
  });
});

/** Moves `slots` slots from the master on `from` to the one on `to`, as an operator would. */
async function reshard(from: number, to: number, slots: number): Promise<void> {
  try {
    await promisify(execFile)(
      'redis-cli',
      ['--cluster', 'reshard', `127.0.0.1:${from}`, '--cluster-from', nodeId(from), '--cluster-to', nodeId(to), '--cluster-slots', String(slots), '--cluster-yes'],
      { timeout: 180_000, maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`redis-cli --cluster reshard failed: ${stderr.trim()} ${stdout.trim().split('\n').slice(-6).join(' | ')}`);
  }
}

/** How many slots the master on `port` owns. */
function countSlots(port: number): number {
  const out = spawnSync('redis-cli', ['-p', String(port), 'CLUSTER', 'NODES'], { encoding: 'utf8' }).stdout;
  const me = out.split('\n').find((line) => line.includes('myself'))!;
  return me
    .trim()
    .split(' ')
    .slice(8)
    .reduce((sum, range) => {
      const [lo, hi] = range.split('-').map(Number);
      return sum + (hi === undefined ? 1 : hi - lo! + 1);
    }, 0);
}
