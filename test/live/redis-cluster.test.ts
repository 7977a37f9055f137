/**
 * Live feeds through a Redis Cluster of three masters (sharded pub/sub), with two app instances: events across
 * instances in order and once, channels spread over the shards, a master killed and restarted, and a master's
 * slots moved to another while feeds are open. The cluster is this file's own, on ports of its own.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { App } from '../../src/app.js';
import { HistoryDocument, InboxEventsDocument, RoomEventsDocument, type RoomEventsSubscription } from '../generated/graphql.js';
import { gqlOk } from '../testkit/http.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { post, roomWith, uniqueRoomName } from '../testkit/data/rooms.js';
import { send } from '../testkit/data/messenger.js';
import { inboxFeed, roomFeed } from '../testkit/feeds.js';
import { eventually } from '../testkit/poll.js';
import { goesOnLive, nothingSeen, ownerPort, ownRedisCluster, readUntil, redisChannelOf } from '../testkit/faults/redis-cluster.js';
import { clusterNodes, startMaster, stopMaster, untilClusterOk } from '../../src/local-redis/cluster.js';
import { ShardedRedisPubSub } from '../../src/pubsub/redis-cluster.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';

const own = ownRedisCluster('cluster', [7111, 7112, 7113]);
const { cluster, prefix: PREFIX } = own;
const NO_METER = { eventPublished: () => {}, eventDelivered: () => {} };

let a: App;
let b: App;

beforeAll(async () => {
  [a, b] = await own.start();
});

afterAll(async () => {
  await own.stop();
});

/** The cluster node id of the master on `port`. */
function nodeId(port: number): string {
  return spawnSync('redis-cli', ['-p', String(port), 'CLUSTER', 'MYID'], { encoding: 'utf8' }).stdout.trim();
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
      heard.push((event as Extract<RoomEventsSubscription['roomEvents'], { __typename: 'MessagePosted' }>).message.id);
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
    const port = await ownerPort(cluster.ports, redisChannelOf(PREFIX, room));
    const seen = nothingSeen();
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
    await goesOnLive(a, poster, room, feed, seen, 'after');
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
    const from = await ownerPort(cluster.ports, redisChannelOf(PREFIX, room));
    const to = cluster.ports.find((p) => p !== from)!;
    const seen = nothingSeen();
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
    expect(await ownerPort(cluster.ports, redisChannelOf(PREFIX, room))).toBe(to);

    await goesOnLive(a, poster, room, feed, seen, 'after the move');
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
