/**
 * Nodes of the three lost under a steady mixed load (posts, joins of new rooms, direct messages, purchases,
 * logins, reactions, an open room feed) on two instances: one killed with SIGKILL for 30 s, the window before
 * gossip notices included; then back, read at LOCAL_QUORUM beside one of the others alone; then each node in
 * turn killed and started again (a rolling restart). Nothing acknowledged is lost, nothing is half written, no
 * subscriber misses an event, and no request fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { clusterNodeAnswers, killClusterNode, restartClusterNode } from '../../src/local-node/cluster.js';
import {
  AddReactionDocument,
  BuyItemDocument,
  CreateRoomDocument,
  HistoryDocument,
  type HistoryQuery,
  JoinRoomDocument,
  LoginDocument,
  PostMessageDocument,
  RoomEventsDocument,
  type RoomEventsSubscription,
  SendDirectMessageDocument,
} from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { gql, gqlOk } from '../testkit/http.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { roomWith, uniqueRoomName } from '../testkit/data/rooms.js';
import { roomFeed, type Feed } from '../testkit/feeds.js';
import { createItem } from '../testkit/data/marketplace.js';
import { eventually } from '../testkit/poll.js';

const KILLED = 2; // 127.0.0.4
let a: App;
let b: App;
let people: TestUser[];

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  people = await signUpMany(a, 8, 'loss');
});

// Whatever a test did, the cluster is whole again for the next file (a running node is left as it is).
afterAll(async () => {
  for (const node of [0, 1, 2]) await restartClusterNode(node);
}, 600_000);

/** Requests that failed, and what the load had acknowledged: posts in order, joins, per-loop counts. */
interface Load {
  /** Requests answered, failed ones included. */
  requests: () => number;
  failures: string[];
  posted: string[];
  joined: Array<{ room: string; login: string }>;
  stop: () => Promise<void>;
}

/**
 * A steady mixed load on both instances until stopped: posts in one room, new rooms joined, direct messages,
 * purchases, logins and reactions, each loop one request at a time. Every refusal or error is recorded.
 */
function startLoad(room: string, itemId: string): Load {
  const failures: string[] = [];
  const posted: string[] = [];
  const joined: Array<{ room: string; login: string }> = [];
  let stopping = false;
  const either = (i: number) => (i % 2 ? a : b);
  let requests = 0;
  const step = async (what: string, run: () => Promise<{ errors?: ReadonlyArray<{ message: string; extensions?: Record<string, unknown> }> }>) => {
    try {
      const res = await run();
      requests += 1;
      if (res.errors?.length) failures.push(`${what}: ${res.errors[0]!.extensions?.code} ${res.errors[0]!.message}`);
      return res;
    } catch (err) {
      failures.push(`${what}: ${(err as Error).message}`);
      return undefined;
    }
  };
  const [alice, bob] = [people[0]!, people[1]!];
  const loops = [
    async () => {
      for (let i = 0; !stopping; i++) {
        const res = await step('post', () => gql(either(i), PostMessageDocument, { roomName: room, content: `load ${i}` }, alice.token));
        if (res && !res.errors) posted.push((res as { data: { postMessage: { id: string } } }).data.postMessage.id);
      }
    },
    async () => {
      for (let i = 0; !stopping; i++) {
        const newRoom = uniqueRoomName('loss');
        const created = await step('createRoom', () => gql(either(i), CreateRoomDocument, { input: { name: newRoom } }, people[3]!.token));
        if (!created || created.errors) continue;
        const res = await step('join', () => gql(either(i + 1), JoinRoomDocument, { roomName: newRoom }, people[4]!.token));
        if (res && !res.errors) joined.push({ room: newRoom, login: people[4]!.login });
      }
    },
    async () => {
      for (let i = 0; !stopping; i++) await step('sendDirectMessage', () => gql(either(i), SendDirectMessageDocument, { to: people[6]!.login, content: `dm ${i}` }, people[5]!.token));
    },
    async () => {
      for (let i = 0; !stopping; i++) {
        const res = await step('buyItem', () => gql(either(i), BuyItemDocument, { itemId, quantity: 1 }, people[7]!.token));
        // A purchase bound but not completed answers CREATED without an error: a partial write, counted as a failure.
        const status = (res as { data?: { buyItem?: { status?: string } } } | undefined)?.data?.buyItem?.status;
        if (res && !res.errors && status !== 'COMPLETED') failures.push(`buyItem: answered ${status}`);
      }
    },
    async () => {
      for (let i = 0; !stopping; i++) await step('login', () => gql(either(i), LoginDocument, { login: bob.login, password: bob.password }));
    },
    async () => {
      for (let i = 0; !stopping; i++) {
        const target = posted.at(-1);
        if (target) await step('addReaction', () => gql(either(i), AddReactionDocument, { messageId: target, emoji: i % 2 ? '👍' : '🎉' }, bob.token));
        else await new Promise((r) => setImmediate(r));
      }
    },
  ];
  const running = Promise.all(loops.map((loop) => loop()));
  return {
    requests: () => requests,
    failures,
    posted,
    joined,
    stop: async () => {
      stopping = true;
      await running;
    },
  };
}

/** Keeps the load going for `ms` more (a deadline poll: the load is what runs meanwhile). */
const loadFor = (ms: number) => {
  const until = Date.now() + ms;
  return eventually(() => Date.now() >= until, { what: `${ms} ms of load`, timeoutMs: ms + 10_000, intervalMs: 500 });
};

/** Every message id of a room's history, read page by page at LOCAL_QUORUM. */
async function historyIds(room: string): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page: HistoryQuery = await gqlOk(a, HistoryDocument, { roomName: room, first: 200, after }, people[0]!.token);
    const messages = page.room!.messages!;
    ids.push(...messages.edges.map((e) => e.node.id));
    if (!messages.pageInfo.hasNextPage) return ids;
    after = messages.pageInfo.endCursor!;
  }
}

/** Every acknowledged post is in the room's history, and every join has its system message. */
async function expectNothingLost(room: string, load: Load) {
  const history = await historyIds(room);
  expect(load.posted.filter((id) => !history.includes(id))).toEqual([]);
  for (const j of load.joined) {
    const page = (await gqlOk(a, HistoryDocument, { roomName: j.room, first: 10 }, people[3]!.token)).room!.messages!.edges;
    expect(page.some((e) => e.node.systemMessage && e.node.author?.login === j.login), j.room).toBe(true);
  }
}

/** The room's feed on the other instance had every acknowledged post, in order. */
async function expectFedInOrder(feed: Feed<RoomEventsSubscription>, load: Load) {
  const seen: string[] = [];
  while (seen.length < load.posted.length) {
    const event = (await feed.data()).roomEvents;
    if (event.__typename === 'MessagePosted') seen.push(event.message.id);
  }
  expect(seen).toEqual(load.posted);
}

/** A room followed on the other instance, an item, and the load on them, running. */
async function loadRunning() {
  const room = await roomWith(a, people[0]!, people.slice(1));
  const feed = await roomFeed(b, people[1]!.token, RoomEventsDocument, { roomName: room });
  const item = await createItem(a, people[2]!, { offeredUnits: 10_000 });
  const load = startLoad(room, item.id);
  await eventually(() => load.posted.length >= 10, { what: 'the load to run' });
  return { room, feed, load };
}

describe('nodes lost under load', () => {
  it('one killed: fails no request, loses no acknowledged write, leaves nothing half written, misses no event', async () => {
    const { room, feed, load } = await loadRunning();
    try {
      await killClusterNode(KILLED);
      await loadFor(30_000);
    } finally {
      await load.stop();
    }
    console.log(`[cluster] a node killed for 30 s: ${load.requests()} requests, ${load.failures.length} failed, ${load.posted.length} posts, ${load.joined.length} joins`);
    expect(load.failures).toEqual([]);
    await expectNothingLost(room, load);
    await expectFedInOrder(feed, load);
  }, 120_000);

  it('the node back: a quorum with it finds every write made while it was down; then a rolling restart fails nothing', async () => {
    const { room, feed, load } = await loadRunning();
    try {
      // Still down from the test before (or killed now): posts land on the two others.
      if (await clusterNodeAnswers(KILLED)) await killClusterNode(KILLED);
      await loadFor(10_000);
      const whileDown = [...load.posted];
      await restartClusterNode(KILLED);
      // Each other node in turn, killed and started again under the load: while one is down, a quorum is the
      // returned node and the one left, and a read there finds every post made while the returned node was down.
      for (const other of [0, 1]) {
        await killClusterNode(other);
        const history = await historyIds(room);
        expect(whileDown.filter((id) => !history.includes(id))).toEqual([]);
        await loadFor(10_000);
        await restartClusterNode(other);
      }
      // The rolling restart's last node: the one killed first, killed again now that the others are back.
      await killClusterNode(KILLED);
      await loadFor(10_000);
      await restartClusterNode(KILLED);
      await loadFor(5_000);
    } finally {
      await load.stop();
    }
    console.log(`[cluster] the node back, then a rolling restart: ${load.requests()} requests, ${load.failures.length} failed, ${load.posted.length} posts, ${load.joined.length} joins`);
    expect(load.failures).toEqual([]);
    await expectNothingLost(room, load);
    await expectFedInOrder(feed, load);
  }, 900_000);
});
