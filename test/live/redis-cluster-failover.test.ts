/**
 * A Redis Cluster failover under two instances: three masters with a replica each, the master of a room's channel
 * killed with SIGKILL while posts go on through both instances. Its replica is promoted; every post inside the
 * fault's window is answered within the bound, the feed is told and catches up every post once, and goes on live
 * from the new master. The cluster is this file's own, on ports of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { RoomEventsDocument } from '../generated/graphql.js';
import { signUp } from '../testkit/data/users.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { roomFeed } from '../testkit/feeds.js';
import { eventually } from '../testkit/poll.js';
import { killMaster } from '../../src/local-redis/cluster.js';
import {
  ANSWER_BOUND_MS, ownRedisCluster, clusterNodesSeenBy, expectEachOnce, goesOnLive, keySlotOf, nothingSeen, ownerOfSlot, ownWorkMs, postWhile, readUntil, ready, redisChannelOf,
} from '../testkit/faults/redis-cluster.js';

const own = ownRedisCluster('failover', [7131, 7132, 7133, 7134, 7135, 7136], 1);
const { cluster, prefix: PREFIX } = own;

let a: App;
let b: App;

beforeAll(async () => {
  [a, b] = await own.start();
});

afterAll(async () => {
  await own.stop();
});

describe('a Redis Cluster with replicas, failing over', () => {
  it("the master of a room's channel killed: its replica is promoted, posts through both instances are answered meanwhile, the feed catches up and goes on live", { timeout: 60_000 }, async () => {
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const room = await roomWith(a, poster, [reader]);
    const feed = await roomFeed(b, reader.token, RoomEventsDocument, { roomName: room });
    const seen = nothingSeen();
    await readUntil(feed, (await post(a, poster, room, 'before')).id, seen);
    const slot = await keySlotOf(cluster.ports[0]!, redisChannelOf(PREFIX, room));
    const { master, replicas } = (await ownerOfSlot(cluster.ports[0]!, slot))!;
    expect(replicas).toHaveLength(1);
    const survivor = cluster.ports.find((port) => port !== master.port)!;

    // Four posters at a time, so that a loaded machine still makes enough posts inside the few seconds a failover
    // takes; each post is bound by its two Redis steps plus its own work with as many posters, measured first.
    const loops = 4;
    const boundMs = ANSWER_BOUND_MS + (await ownWorkMs([a, b], poster, room, loops));

    const killedAt = Date.now();
    await killMaster(master.port);
    const window = { open: true };
    const load = postWhile(window, [a, b], poster, room, { loops, boundMs });
    // The fault is felt: the cluster fails the master and promotes its replica to serve the room's slot.
    await eventually(async () => (await ownerOfSlot(survivor, slot))?.master.id === replicas[0]!.id, { timeoutMs: 20_000, intervalMs: 100, what: 'the replica to be promoted' });
    const promotedAfter = Date.now() - killedAt;
    expect((await clusterNodesSeenBy(survivor)).find((node) => node.id === master.id)?.failed).toBe(true);
    // The window lasts until both instances serve from the new master again.
    await eventually(async () => (await ready(a)) && (await ready(b)), { timeoutMs: 20_000, intervalMs: 100, what: 'both instances ready after the failover' });
    window.open = false;
    const during = await load;
    console.log(`[redis-failover] master ${master.port} killed, replica ${replicas[0]!.port} promoted after ${promotedAfter} ms; ${during.inside.length} posts answered inside the ${Date.now() - killedAt} ms window, ${during.failed.length} failed, ${during.slow} slower than ${boundMs} ms (slowest ${during.slowest} ms)`);
    expect(during.failed).toEqual([]);
    expect(during.slow).toBe(0);
    expect(during.inside.length).toBeGreaterThanOrEqual(5);

    // Live again, from the promoted replica; the feed was told, and catching up holds every post it missed, once.
    await goesOnLive(a, poster, room, feed, seen, 'after the failover');
    expect(seen.resumeCursors.length).toBeGreaterThan(0);
    const { live, caughtUp } = await expectEachOnce(b, reader, room, seen, during.ids);
    console.log(`[redis-failover] the feed: ${live} posts live, ${caughtUp} caught up, ${seen.resumeCursors.length} interruption notice(s)`);
  });
});
