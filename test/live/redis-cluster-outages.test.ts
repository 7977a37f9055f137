/**
 * Redis Cluster outages under two instances, each fault counted inside its window: the whole cluster killed
 * (posts answer while it is down, and are stored), the whole cluster flapping (delivery comes back by itself and
 * no instance exits), and one master killed with SIGKILL (the feed is told, always, and catches up). The cluster is
 * this file's own, on ports of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from 'ioredis';
import type { App } from '../../src/app.js';
import { HistoryDocument, RoomEventsDocument, type RoomEventsSubscription } from '../generated/graphql.js';
import { startApp, stopApp } from '../testkit/app.js';
import { gqlOk } from '../testkit/http.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { roomFeed, type Feed } from '../testkit/feeds.js';
import { eventually } from '../testkit/poll.js';
import { clusterNodes, killMaster, startMaster, startRedisCluster, stopRedisCluster, untilClusterOk, type RedisClusterOptions } from '../../src/local-redis/cluster.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';
import { REDIS_STEP_MS } from '../../src/pubsub/redis-connection.js';

const cluster: RedisClusterOptions = {
  ports: [7121, 7122, 7123],
  dir: mkdtempSync(join(tmpdir(), 'parley-redis-outages-')),
  log: () => {},
};
const PREFIX = `parley:outage-test-${randomUUID().slice(0, 8)}:`;
/**
 * The documented bound on a post while Redis cannot be reached (docs/redis-cluster.md): two Redis steps (its rate
 * limit and its event) of REDIS_STEP_MS each, with room for a loaded machine.
 */
const ANSWER_BOUND_MS = 2 * REDIS_STEP_MS + 1_500;

let a: App;
let b: App;
let admin: Cluster;

beforeAll(async () => {
  await startRedisCluster(cluster, { fresh: true });
  const env = { REDIS_CLUSTER_NODES: clusterNodes(cluster), REDIS_PREFIX: PREFIX };
  [a, b] = await Promise.all([startApp({ env }), startApp({ env })]);
  admin = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0]! }], { slotsRefreshInterval: 500 });
  // The test's own client sees every outage too: its errors are expected.
  admin.on('error', () => {});
  await admin.ping();
});

afterAll(async () => {
  await Promise.all([a, b].filter(Boolean).map((app) => stopApp(app)));
  admin?.disconnect();
  stopRedisCluster(cluster);
  rmSync(cluster.dir, { recursive: true, force: true });
});

type RoomEvent = RoomEventsSubscription['roomEvents'];
interface Seen {
  live: string[];
  resumeCursors: string[];
}

/** Reads a feed until the message `untilId` is delivered live, gathering live messages and interruption notices. */
async function readUntil(feed: Feed<RoomEventsSubscription>, untilId: string, seen: Seen) {
  for (;;) {
    const event: RoomEvent = (await feed.data(30_000)).roomEvents;
    if (event.__typename === 'FeedInterrupted') seen.resumeCursors.push(event.resumeCursor);
    else if (event.__typename === 'MessagePosted') {
      seen.live.push(event.message.id);
      if (event.message.id === untilId) return;
    }
  }
}

/** Posts until one is delivered live on the feed, each delivered once. */
async function goesOnLive(app: App, poster: TestUser, room: string, feed: Feed<RoomEventsSubscription>, seen: Seen, content: string) {
  const after = await eventually(async () => {
    const message = await post(app, poster, room, content);
    await readUntil(feed, message.id, seen);
    return message;
  }, { timeoutMs: 60_000, intervalMs: 500, what: `a post (${content}) to be delivered live` });
  expect(new Set(seen.live).size).toBe(seen.live.length);
  return after;
}

/** Every message id of a room read on `app`, paged back 200 at a time. */
async function storedIds(app: App, reader: TestUser, room: string, before?: string): Promise<string[]> {
  const ids: string[] = [];
  for (let cursor = before; ; ) {
    const page = (await gqlOk(app, HistoryDocument, { roomName: room, last: 200, before: cursor }, reader.token)).room!.messages;
    ids.unshift(...page.edges.map((e) => e.node.id));
    if (!page.pageInfo.hasPreviousPage || page.edges.length === 0) return ids;
    cursor = page.pageInfo.startCursor!;
  }
}

/** The port of the master that owns `key`'s slot now. */
async function ownerPort(key: string): Promise<number> {
  const slot = (await admin.cluster('KEYSLOT', key)) as number;
  const slots = await admin.cluster('SLOTS');
  return slots.find(([from, to]) => slot >= from && slot <= to)![2]![1];
}

const killAll = () => Promise.all(cluster.ports.map((port) => killMaster(port)));
async function restartAll() {
  for (const port of cluster.ports) await startMaster(cluster, port);
  await untilClusterOk(cluster, 60_000);
}
const ready = async (app: App) => (await fetch(`${app.url}/ready`)).status === 200;

/**
 * Posts through `apps` in turn, one at a time, while `window.open`: each post counted as answered inside the window
 * only if it started and was answered while the fault held, and as slow past ANSWER_BOUND_MS.
 */
async function postWhile(window: { open: boolean }, apps: App[], poster: TestUser, room: string) {
  const outcome = { inside: [] as string[], failed: [] as string[], slow: 0, slowest: 0, ids: [] as string[] };
  for (let i = 0; window.open; i++) {
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
    if (took > ANSWER_BOUND_MS) outcome.slow += 1;
  }
  return outcome;
}

describe('a Redis Cluster that goes away', { timeout: 180_000 }, () => {
  it('whole cluster killed: posts are answered within the bound while it is down and stored; feeds are told and go on live', async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const feed = await roomFeed(b, reader.token, RoomEventsDocument, { roomName: room });
    const seen: Seen = { live: [], resumeCursors: [] };
    await readUntil(feed, (await post(a, poster, room, 'before')).id, seen);

    await killAll();
    const window = { open: true };
    const load = postWhile(window, [a, b], poster, room);
    // The fault is felt: both instances say they are not ready.
    await eventually(async () => !(await ready(a)) && !(await ready(b)), { timeoutMs: 10_000, what: 'both instances to be unready' });
    // Held for a while with the load running, as an outage lasts.
    const downFor = Date.now() + 5_000;
    await eventually(() => Date.now() > downFor, { timeoutMs: 10_000, intervalMs: 200, what: 'the outage to last 5 s' });
    window.open = false;
    const during = await load;
    await restartAll();
    console.log(`[redis-outage] whole cluster down ~5 s: ${during.inside.length} posts answered inside the window, ${during.failed.length} failed, ${during.slow} slower than ${ANSWER_BOUND_MS} ms (slowest ${during.slowest} ms)`);
    expect(during.failed).toEqual([]);
    expect(during.slow).toBe(0);
    expect(during.inside.length).toBeGreaterThanOrEqual(10);

    await eventually(async () => (await ready(a)) && (await ready(b)), { timeoutMs: 30_000, intervalMs: 250, what: 'both instances ready again' });
    await goesOnLive(a, poster, room, feed, seen, 'after');
    // The feed was told (its shard went away), and catching up finds every post made meanwhile.
    expect(seen.resumeCursors.length).toBeGreaterThan(0);
    const stored = await storedIds(b, reader, room);
    expect(during.ids.filter((id) => stored.includes(id))).toEqual(during.ids);
  });

  it('whole cluster flapping four times: every instance delivers live again by itself, and none exits', async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const feedOnA = await roomFeed(a, reader.token, RoomEventsDocument, { roomName: room });
    const feedOnB = await roomFeed(b, reader.token, RoomEventsDocument, { roomName: room });
    const seenA: Seen = { live: [], resumeCursors: [] };
    const seenB: Seen = { live: [], resumeCursors: [] };
    const first = await post(a, poster, room, 'before');
    await Promise.all([readUntil(feedOnA, first.id, seenA), readUntil(feedOnB, first.id, seenB)]);

    let answeredDown = 0;
    for (let round = 0; round < 4; round++) {
      await killAll();
      await eventually(async () => !(await ready(a)), { timeoutMs: 10_000, what: 'A to feel the outage' });
      await post(b, poster, room, `down ${round}`);
      answeredDown += 1;
      await restartAll();
      // Up only briefly, not always long enough for every connection to come back.
      await post(a, poster, room, `up ${round}`).catch(() => undefined);
    }
    expect(answeredDown).toBe(4);
    await eventually(async () => (await ready(a)) && (await ready(b)), { timeoutMs: 30_000, intervalMs: 250, what: 'both instances ready after the flapping' });
    await goesOnLive(b, poster, room, feedOnA, seenA, 'after flapping (to A)');
    await goesOnLive(a, poster, room, feedOnB, seenB, 'after flapping (to B)');
    expect(seenA.resumeCursors.length).toBeGreaterThan(0);
    expect(seenB.resumeCursors.length).toBeGreaterThan(0);
  });

  it("a master killed with SIGKILL under a feed: the feed is told, catches up every post, and goes on live", async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const feed = await roomFeed(b, reader.token, RoomEventsDocument, { roomName: room });
    const port = await ownerPort(`${PREFIX}events:${roomChannel(room)}`);
    const seen: Seen = { live: [], resumeCursors: [] };
    await readUntil(feed, (await post(a, poster, room, 'before')).id, seen);

    await killMaster(port);
    const window = { open: true };
    const load = postWhile(window, [a], poster, room);
    await eventually(async () => !(await ready(b)), { timeoutMs: 10_000, what: 'B to be unready' });
    const downFor = Date.now() + 6_000;
    await eventually(() => Date.now() > downFor, { timeoutMs: 12_000, intervalMs: 200, what: 'the outage to last 6 s' });
    window.open = false;
    const during = await load;
    await startMaster(cluster, port);
    await untilClusterOk(cluster, 60_000);
    console.log(`[redis-outage] master ${port} killed ~6 s: ${during.inside.length} posts answered inside the window, ${during.failed.length} failed, slowest ${during.slowest} ms`);
    expect(during.failed).toEqual([]);
    expect(during.slow).toBe(0);
    // A post whose event goes to the dead master waits out that one step (REDIS_STEP_MS), no more.
    expect(during.inside.length).toBeGreaterThanOrEqual(3);

    await goesOnLive(a, poster, room, feed, seen, 'after');
    expect(seen.resumeCursors.length).toBeGreaterThan(0);
    const caughtUp = await storedIds(b, reader, room, seen.resumeCursors[0]!);
    const missedLive = during.ids.filter((id) => !seen.live.includes(id));
    expect(missedLive.filter((id) => caughtUp.includes(id))).toEqual(missedLive);
  });
});
