/**
 * Redis Cluster outages under two instances, each fault counted inside its window: the whole cluster killed
 * (posts answer while it is down, and are stored), the whole cluster flapping (delivery comes back by itself and
 * no instance exits), one master killed with SIGKILL (the feed is told, always, and catches up), and one master
 * stalled with SIGSTOP (its connections stay open and nothing answers). The cluster is this file's own, three
 * masters without replicas on ports of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { RoomEventsDocument } from '../generated/graphql.js';
import { signUp } from '../testkit/data/users.js';
import { post, roomWith, uniqueRoomName } from '../testkit/data/rooms.js';
import { roomFeed } from '../testkit/feeds.js';
import { eventually } from '../testkit/poll.js';
import { MISSED_CHANNEL } from '../../src/pubsub/missed-publishes.js';
import { killMaster, stallMaster, startMaster, untilClusterOk } from '../../src/local-redis/cluster.js';
import {
  ANSWER_BOUND_MS, ownRedisCluster, expectEachOnce, goesOnLive, nothingSeen, ownerPort, postWhile, readUntil, ready, redisChannelOf, storedIds, untilTold,
} from '../testkit/faults/redis-cluster.js';

const own = ownRedisCluster('outages', [7121, 7122, 7123]);
const { cluster, prefix: PREFIX } = own;

let a: App;
let b: App;

beforeAll(async () => {
  [a, b] = await own.start();
});

/** Whatever a failed test left stalled goes on, so that the cluster can be stopped. */
let resumeStalled: (() => void) | undefined;

afterAll(async () => {
  resumeStalled?.();
  await own.stop();
});

const killAll = () => Promise.all(cluster.ports.map((port) => killMaster(port)));
async function restartAll() {
  for (const port of cluster.ports) await startMaster(cluster, port);
  await untilClusterOk(cluster, 60_000);
}

describe('a Redis Cluster that goes away', { timeout: 180_000 }, () => {
  it('whole cluster killed: posts are answered within the bound while it is down and stored; feeds are told and go on live', async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const feed = await roomFeed(b, reader.token, RoomEventsDocument, { roomName: room });
    const seen = nothingSeen();
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
    const seenA = nothingSeen();
    const seenB = nothingSeen();
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
    const port = await ownerPort(cluster.ports, redisChannelOf(PREFIX, room));
    const seen = nothingSeen();
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
    await expectEachOnce(b, reader, room, seen, during.ids);
  });

  it("a master stalled with SIGSTOP under a feed: posts are answered within the bound meanwhile, the feed is told, catches up every post once, and goes on live after SIGCONT", async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    // The room's channel on the master that carries the notices of failed publishes too: no notice gets out while
    // it is stalled, so the feed can only be told once it answers again.
    const port = await ownerPort(cluster.ports, `${PREFIX}events:${MISSED_CHANNEL}`);
    let name = uniqueRoomName();
    while ((await ownerPort(cluster.ports, redisChannelOf(PREFIX, name))) !== port) name = uniqueRoomName();
    const room = await roomWith(a, poster, [reader], name);
    const feed = await roomFeed(b, reader.token, RoomEventsDocument, { roomName: room });
    const seen = nothingSeen();
    await readUntil(feed, (await post(a, poster, room, 'before')).id, seen);

    // Its connections stay open and nothing answers: no connection closes to tell an instance, each command waits.
    resumeStalled = stallMaster(port);
    const window = { open: true };
    const load = postWhile(window, [a, b], poster, room, { loops: 4 });
    // The fault is felt: the stalled master does not answer B's readiness check.
    await eventually(async () => !(await ready(b)), { timeoutMs: 10_000, what: 'B to be unready' });
    const stalledFor = Date.now() + 5_000;
    await eventually(() => Date.now() > stalledFor, { timeoutMs: 10_000, intervalMs: 200, what: 'the stall to last 5 s' });
    window.open = false;
    const during = await load;
    resumeStalled();
    resumeStalled = undefined;
    console.log(`[redis-outage] master ${port} stalled ~5 s: ${during.inside.length} posts answered inside the window, ${during.failed.length} failed, ${during.slow} slower than ${ANSWER_BOUND_MS} ms (slowest ${during.slowest} ms)`);
    expect(during.failed).toEqual([]);
    expect(during.slow).toBe(0);
    expect(during.inside.length).toBeGreaterThanOrEqual(5);

    await eventually(async () => (await ready(a)) && (await ready(b)), { timeoutMs: 30_000, intervalMs: 250, what: 'both instances ready after SIGCONT' });
    await goesOnLive(a, poster, room, feed, seen, 'after');
    // Told by the notices of failed publishes (no connection closed): when the notices' channel is on the stalled
    // master too, they go out once it answers, and may come after the feed is live again.
    await untilTold(feed, seen);
    const { live, caughtUp } = await expectEachOnce(b, reader, room, seen, during.ids);
    console.log(`[redis-outage] master ${port} stalled: the feed had ${live} posts live, ${caughtUp} caught up, ${seen.resumeCursors.length} interruption notice(s)`);
    await untilClusterOk(cluster, 30_000);
  });
});
