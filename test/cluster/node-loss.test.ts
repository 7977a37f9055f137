/**
 * Nodes of the three lost under a steady mixed load (test/testkit/faults/fault-load.ts) on two instances, each a process
 * of its own as in production (a client in another process goes on sending while a server's event loop is busy):
 * one node killed with SIGKILL for 30 s, the window before gossip notices included; the 30 s after it returns,
 * and the returned node read alone at ONE; then a rolling restart. In each window every kind of request is
 * answered, at least a floor of each, and none fails; afterwards every acknowledged write is found exactly once,
 * and a room feed on a third instance had every post, in order.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import cassandra from 'cassandra-driver';
import type { App } from '../../src/app.js';
import { CLUSTER_HOSTS, CLUSTER_CQL_PORT, clusterContactPoints, clusterNodeAnswers, killClusterNode, restartClusterNode } from '../../src/local-node/cluster.js';
import { RoomEventsDocument, type RoomEventsSubscription } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { startAppProcess } from '../testkit/app-process.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { messageKey, roomWith } from '../testkit/data/rooms.js';
import { roomFeed, type Feed } from '../testkit/feeds.js';
import { createItem, uuid } from '../testkit/data/marketplace.js';
import { eventually } from '../testkit/poll.js';
import { expectEveryWriteExactlyOnce, expectWindow, startFaultLoad, type FaultLoad, type LoadCast } from '../testkit/faults/fault-load.js';
import { metricValue } from '../testkit/metrics.js';

const KILLED = 2; // 127.0.0.4
/** Requests of each kind answered inside a window of 30 s, at least (a loop blocked through it answers none). */
const FLOOR_30_S = 5;
/**
 * In the 10 s a node of a rolling restart is down, at least one of each kind: until gossip convicts the node, a
 * logged batch waits CASSANDRA_BATCHLOG_PATIENCE_MS for its batchlog and then runs unlogged as well, so a purchase
 * (an LWT and a batch) takes about 2.5 s, and 3-4 fit in the window here.
 */
const ROLLING_DOWN = { floor: 1 } as const;
const FLOOR_10_S = 2;
const OFFERED = 100_000;

let feedHost: App;
let instances: App[];
let people: TestUser[];
let everyLoad: LoadCast;

beforeAll(async () => {
  const [host, one, two] = await Promise.all([startApp({ redis: true }), startAppProcess({ redis: true }), startAppProcess({ redis: true })]);
  feedHost = host;
  instances = [one.app, two.app];
  people = await signUpMany(feedHost, 8, 'loss');
  const [poster, creator, joiner, sender, recipient, buyer, reactor] = people as [TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser];
  everyLoad = { poster, creator, joiner, sender, recipient, buyer, reactor };
}, 120_000);

// Whatever a test did, the cluster is whole again for the next file (a running node is left as it is).
afterAll(async () => {
  for (const node of [0, 1, 2]) await restartClusterNode(node);
}, 600_000);

/** A room followed on the feed host, an item on sale, and the load on them, running. */
async function loadRunning() {
  const room = await roomWith(feedHost, everyLoad.poster, [everyLoad.reactor, people[7]!]);
  const feed = await roomFeed(feedHost, people[7]!.token, RoomEventsDocument, { roomName: room });
  const item = await createItem(feedHost, people[7]!, { offeredUnits: OFFERED });
  // A conversation of this load's own: its messages and unread count are checked exactly.
  const [sender, recipient] = (await signUpMany(feedHost, 2, 'loss')) as [TestUser, TestUser];
  const cast: LoadCast = { ...everyLoad, sender, recipient };
  const load = startFaultLoad(instances, cast, room, item.id, OFFERED);
  await eventually(() => load.acknowledged.posts.length >= 10 && load.acknowledged.purchases.some((p) => p.keyed), { what: 'the load to run', timeoutMs: 30_000 });
  return { feed, load, cast };
}

/** Keeps the load going until `until` (a deadline poll: the load is what runs meanwhile). */
const loadUntil = (until: number) => eventually(() => Date.now() >= until, { what: 'the load to run its window', timeoutMs: until - Date.now() + 10_000, intervalMs: 250 });

/** Starts node `index` again; resolves with when its CQL port answered, once every node sees it up. */
async function bringBack(index: number): Promise<number> {
  let answered = 0;
  const watching = (async () => {
    while (!(await clusterNodeAnswers(index))) await new Promise((resolve) => setTimeout(resolve, 100));
    answered = Date.now();
  })();
  await restartClusterNode(index);
  await watching;
  return answered;
}

/** The room feed had every acknowledged post, in order. */
async function expectFedInOrder(feed: Feed<RoomEventsSubscription>, load: FaultLoad) {
  const seen: string[] = [];
  while (seen.length < load.acknowledged.posts.length) {
    const event = (await feed.data(30_000)).roomEvents;
    if (event.__typename === 'MessagePosted') seen.push(event.message.id);
  }
  expect(seen).toEqual(load.acknowledged.posts.map((p) => p.id));
}

/** The longest event-loop stall each load instance measured since it was last asked (prom-client resets it). */
async function eventLoopLagMs(): Promise<number[]> {
  return Promise.all(instances.map(async (app) => Math.round((await metricValue(app, 'nodejs_eventloop_lag_max_seconds')) * 1000)));
}

/**
 * Node `index` alone, at consistency ONE with it as coordinator: the writes acknowledged while it was down (posts,
 * rooms created, purchases) are there, brought by hints, once it has them all.
 */
async function expectOnReturnedNode(index: number, load: FaultLoad, whileDown: { posts: number; rooms: number; purchases: number }) {
  const client = new cassandra.Client({ contactPoints: clusterContactPoints().split(','), localDataCenter: 'datacenter1', keyspace: inject('keyspace') });
  await client.connect();
  const host = client.hosts.get(`${CLUSTER_HOSTS[index]}:${CLUSTER_CQL_PORT}`);
  const one = { prepare: true, host, consistency: cassandra.types.consistencies.one };
  const posts = load.acknowledged.posts.slice(whileDown.posts);
  const rooms = load.acknowledged.rooms.slice(whileDown.rooms);
  const purchases = load.acknowledged.purchases.slice(whileDown.purchases);
  const missing = async () => {
    const out: string[] = [];
    for (const p of posts) {
      const key = messageKey(p.id);
      const rs = await client.execute('SELECT content FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [key.roomName, key.bucket, key.messageId], one);
      if (rs.first()?.content !== p.content) out.push(`post ${p.content}`);
    }
    for (const name of rooms) if (!(await client.execute('SELECT room_name FROM chat_rooms WHERE room_name = ?', [name], one)).first()) out.push(`room ${name}`);
    for (const p of purchases) if (!(await client.execute('SELECT status FROM purchases WHERE id = ?', [uuid(p.id)], one)).first()) out.push(`purchase ${p.id}`);
    return out;
  };
  try {
    expect(posts.length + rooms.length + purchases.length).toBeGreaterThan(0);
    let last: string[] = [];
    // What is missing is told once the wait is over (a message built before it would always say none).
    await eventually(async () => (last = await missing()).length === 0, { what: `node ${index + 1} to have the writes made while it was down`, timeoutMs: 90_000, intervalMs: 1_000 }).catch((err: Error) => {
      throw new Error(`${err.message}; missing ${last.length}: ${last.slice(0, 5).join(', ')}`);
    });
    console.log(`[fault] node ${index + 1} alone at ONE has the ${posts.length} posts, ${rooms.length} rooms and ${purchases.length} purchases acknowledged while it was down`);
  } finally {
    await client.shutdown();
  }
}

describe('nodes lost under load', () => {
  it('one killed for 30 s, then back: every kind of request answered in both windows, nothing lost, and the returned node has it all', async () => {
    const { feed, load, cast } = await loadRunning();
    const before = { posts: load.acknowledged.posts.length, rooms: load.acknowledged.rooms.length, purchases: load.acknowledged.purchases.length };
    let down = 0;
    let up = 0;
    let back = 0;
    let end = 0;
    let lag: number[] = [];
    try {
      await eventLoopLagMs();
      down = Date.now();
      await killClusterNode(KILLED);
      await loadUntil(down + 30_000);
      up = Date.now();
      back = await bringBack(KILLED);
      console.log(`[fault] node ${KILLED + 1} answers again ${((back - up) / 1000).toFixed(1)} s after its restart began`);
      await loadUntil(back + 30_000);
      end = Date.now();
      lag = await eventLoopLagMs();
    } finally {
      await load.stop();
    }
    expectWindow(load, 'while a node is down', down, up, { floor: FLOOR_30_S });
    console.log(`[fault] the node took ${((back - up) / 1000).toFixed(1)} s to answer again; longest event-loop stall of each instance since it was killed: ${lag.join(', ')} ms`);
    expectWindow(load, 'from its restart until 30 s after it answers', up, end, { floor: FLOOR_30_S });
    await expectOnReturnedNode(KILLED, load, before);
    await expectEveryWriteExactlyOnce(feedHost, load, cast);
    await expectFedInOrder(feed, load);
  }, 900_000);

  it('a rolling restart: each node killed for 10 s and back, every kind of request answered in each window, nothing lost', async () => {
    const { feed, load, cast } = await loadRunning();
    const windows: Array<{ what: string; from: number; to: number; down: boolean }> = [];
    try {
      for (const node of [0, 1, 2]) {
        const down = Date.now();
        await killClusterNode(node);
        await loadUntil(down + 10_000);
        const up = Date.now();
        windows.push({ what: `node ${node + 1} down`, from: down, to: up, down: true });
        const back = await bringBack(node);
        console.log(`[fault] node ${node + 1} answers again ${((back - up) / 1000).toFixed(1)} s after its restart began`);
        await loadUntil(back + 10_000);
        windows.push({ what: `node ${node + 1} back`, from: up, to: Date.now(), down: false });
      }
    } finally {
      await load.stop();
    }
    for (const w of windows) expectWindow(load, `rolling restart, ${w.what}`, w.from, w.to, w.down ? ROLLING_DOWN : { floor: FLOOR_10_S });
    await expectEveryWriteExactlyOnce(feedHost, load, cast);
    await expectFedInOrder(feed, load);
  }, 1_200_000);
});
