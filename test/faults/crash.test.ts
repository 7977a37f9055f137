/**
 * A server killed with SIGKILL in the middle of posts and purchases (a real
 * process, src/main.ts, no shutdown hook, reaching the node through a proxy
 * the test can stall), at a moment storage holds what its client was never
 * told of: a post stored but not acknowledged, a purchase bound to its item
 * (the stock taken) but not answered and not completed.
 * That state is what clientMessageId, clientPurchaseId and the completion of
 * a bound purchase exist for, so each test kills again until it has caught it.
 * Clients retry what was not acknowledged, with the same idempotency key, on
 * another instance: nothing acknowledged is lost, nothing is duplicated, what
 * was caught is answered as itself, and no stock is taken twice.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { BuyItemDocument, HistoryDocument, ItemDocument, PostMessageDocument } from '../generated/graphql.js';
import { dayBucket } from '../../src/buckets.js';
import { encodeMessageId } from '../../src/resolvers/rooms/ids.js';
import { UNBOUND_IS_FINAL_MS } from '../../src/resolvers/marketplace/timing.js';
import { startApp } from '../testkit/app.js';
import { startAppProcess } from '../testkit/app-process.js';
import { cassandraProxy } from '../testkit/faults/tcp-proxy.js';
import { gql, gqlOk, type GqlResult } from '../testkit/http.js';
import { createItem, cqlRow, cqlRows, uuid } from '../testkit/data/marketplace.js';
import { eventually } from '../testkit/poll.js';
import { roomWith } from '../testkit/data/rooms.js';
import { signUp, signUpMany } from '../testkit/data/users.js';
import { keyOf } from '../testkit/ids.js';
import { mapOf } from '../../src/db/cassandra/client.js';

/** Kills tried before a test gives up on catching its state: each kill lands at a moment the test picks by watching storage. */
const TRIES = 5;

let survivor: App;
beforeAll(async () => {
  survivor = await startApp();
});

/**
 * Sends `requests` to a server process, `concurrency` at a time, and kills it at a moment `seen` picks, or once
 * every request is done: those in flight then die with it, the later ones find no server. From the time
 * `killAfter` of them were answered, its storage traffic is stalled again and again for a look at the tables
 * (`seen`, given the answers so far): with nothing reaching the node or coming back during the look, what it
 * finds is what the node holds when the process dies. Returns each request's answer (undefined: not acknowledged).
 */
async function crashDuring<T>(
  requests: Array<(target: App) => Promise<GqlResult<T>>>,
  { killAfter, seen }: { killAfter: number; seen: (answers: Array<GqlResult<T> | undefined>) => Promise<boolean> },
  concurrency = 8,
) {
  const { proxy, env } = await cassandraProxy();
  const doomed = await startAppProcess({ env });
  const results: Array<GqlResult<T> | undefined> = new Array(requests.length);
  let answered = 0;
  let next = 0;
  let finished = false;
  const worker = async () => {
    while (next < requests.length) {
      const i = next++;
      results[i] = await requests[i]!(doomed.app).catch(() => undefined);
      if (results[i]) answered += 1;
    }
  };
  const sending = Promise.all(Array.from({ length: concurrency }, worker)).then(() => (finished = true));
  try {
    await eventually(
      async () => {
        if (finished) return true;
        if (answered < killAfter) return false;
        proxy.hold();
        let found = false;
        try {
          found = await seen(results);
        } finally {
          // Found: the process dies below with its storage traffic still held.
          if (!found) proxy.release();
        }
        return found;
      },
      { timeoutMs: 60_000, intervalMs: 5, what: 'the state to kill in, or the last answer' },
    );
    await doomed.kill();
    await sending;
    return results;
  } finally {
    await doomed.kill();
    await proxy.close();
  }
}

describe('SIGKILL in the middle of posts', () => {
  /** The room's posts of this test in storage: each one's number (`crash test <n>`) and message id. */
  async function storedPosts(room: string): Promise<Map<number, string>> {
    const now = Date.now();
    const stored = new Map<number, string>();
    // The posts are seconds old: today's bucket, and yesterday's just after midnight.
    for (const bucket of new Set([dayBucket(new Date(now - 60_000)), dayBucket(new Date(now))])) {
      const rows = await cqlRows(survivor, 'SELECT message_id, content FROM chat_room_messages WHERE room_name = ? AND time_bucket = ?', [room, bucket]);
      for (const row of rows) {
        const n = /^crash test (\d+)$/.exec(String(row.content))?.[1];
        if (n !== undefined) stored.set(Number(n), encodeMessageId({ roomName: room, bucket, messageId: row.message_id.toString() }));
      }
    }
    return stored;
  }

  it('keeps every acknowledged message; one stored but not acknowledged is what its retry answers, and no retry adds a duplicate', async () => {
    const author = await signUp(survivor);
    const N = 150;
    const acked = (r: GqlResult<{ postMessage: { id: string } }> | undefined) => r?.data?.postMessage;
    let room = '';
    let first: Array<GqlResult<{ postMessage: { id: string } }> | undefined> = [];
    let storedAtCrash = new Map<number, string>();
    let caught: number[] = [];
    for (let attempt = 1; attempt <= TRIES && caught.length === 0; attempt++) {
      room = await roomWith(survivor, author);
      const send = (i: number) => (target: App) =>
        gql(target, PostMessageDocument, { roomName: room, content: `crash test ${i}`, clientMessageId: `post-${i}` }, author.token);
      first = await crashDuring(
        Array.from({ length: N }, (_, i) => send(i)),
        { killAfter: 5, seen: async (answers) => [...(await storedPosts(room)).keys()].some((i) => !acked(answers[i])) },
      );
      storedAtCrash = await storedPosts(room);
      caught = [...storedAtCrash.keys()].filter((i) => !acked(first[i]));
    }
    expect(caught.length, `a kill landed between a post's write and its answer (${TRIES} tries)`).toBeGreaterThan(0);

    const acknowledged = new Map<number, string>();
    first.forEach((r, i) => acked(r) && acknowledged.set(i, acked(r)!.id));
    expect(acknowledged.size).toBeGreaterThanOrEqual(5);
    expect(acknowledged.size).toBeLessThan(N);
    for (const [i, id] of acknowledged) expect([i, storedAtCrash.get(i)]).toEqual([i, id]);

    // The client retries everything it did not see acknowledged, on the surviving instance.
    for (let i = 0; i < N; i++) {
      if (acknowledged.has(i)) continue;
      const retry = await gqlOk(survivor, PostMessageDocument, { roomName: room, content: `crash test ${i}`, clientMessageId: `post-${i}` }, author.token);
      acknowledged.set(i, retry.postMessage.id);
    }
    // A post stored before the crash, never acknowledged: its retry answers with it, not with a second message.
    for (const i of caught) expect([i, acknowledged.get(i)]).toEqual([i, storedAtCrash.get(i)]);
    // Retrying an acknowledged one answers with the original.
    const ackIndex = first.findIndex((r) => acked(r));
    const again = await gqlOk(survivor, PostMessageDocument, { roomName: room, content: `crash test ${ackIndex}`, clientMessageId: `post-${ackIndex}` }, author.token);
    expect(again.postMessage.id).toBe(acknowledged.get(ackIndex));

    const history = (await gqlOk(survivor, HistoryDocument, { roomName: room, first: 200 }, author.token)).room!.messages.edges.map((e) => e.node);
    const posted = history.filter((m) => m.content?.startsWith('crash test '));
    expect(posted).toHaveLength(N);
    expect(new Set(posted.map((m) => m.content)).size).toBe(N);
    expect(new Set(posted.map((m) => m.id))).toEqual(new Set(acknowledged.values()));
  }, 180_000);
});

describe('SIGKILL in the middle of purchases', () => {
  it('never takes stock twice: a purchase bound but not answered is completed as itself by its retry, every buyer ends with one purchase per key, and sold units match the purchases', async () => {
    // The buyers retry a while later: by this instance's clock, past the time after which a purchase its
    // dead request left unbound can never be bound (until then a retry is told CONFLICT: retry later).
    const later = { offsetMs: 0, now() { return new Date(Date.now() + this.offsetMs); } };
    const retrier = await startApp({ clock: later });
    const [seller, ...buyers] = await signUpMany(retrier, 31, 'crash');

    /** The purchases bound to the item (in its map, their units taken from its stock). */
    const boundTo = async (itemId: string) => {
      const master = await cqlRow(retrier, 'SELECT purchases FROM items WHERE id = ?', [uuid(itemId)]);
      return new Map([...mapOf<number>(master?.purchases)].map(([k, v]) => [String(k), v]));
    };
    type Answer = GqlResult<{ buyItem: { id: string } }> | undefined;
    const answeredIds = (answers: Answer[]) => new Set(answers.map((r) => r?.data?.buyItem.id).filter((id) => id !== undefined).map(keyOf));
    /** Purchases bound to the item whose request got no answer, and still CREATED: no one has completed them. */
    const boundUnanswered = async (itemId: string, answers: Answer[]) => {
      const answered = answeredIds(answers);
      const caught: Array<{ buyer: number; purchaseId: string }> = [];
      for (const purchaseId of (await boundTo(itemId)).keys()) {
        if (answered.has(purchaseId)) continue;
        const row = await cqlRow(retrier, 'SELECT buyer, status FROM purchases WHERE id = ?', [uuid(purchaseId)]);
        if (row?.status === 'CREATED') caught.push({ buyer: buyers.findIndex((b) => b.login === row.buyer), purchaseId });
      }
      return caught;
    };

    let item = { id: '' };
    let key = (i: number) => `order-${i}`;
    let first: Answer[] = [];
    let caught: Array<{ buyer: number; purchaseId: string }> = [];
    const buy = (i: number) => (target: App) =>
      gql(target, BuyItemDocument, { itemId: item.id, quantity: 1, clientPurchaseId: key(i) }, buyers[i]!.token);
    for (let attempt = 1; attempt <= TRIES && caught.length === 0; attempt++) {
      item = await createItem(retrier, seller!, { offeredUnits: 20 });
      key = (i) => `order-${attempt}-${i}`;
      first = await crashDuring(
        buyers.map((_, i) => buy(i)),
        {
          killAfter: 4,
          seen: async (answers) => (await boundUnanswered(item.id, answers)).length > 0,
        },
      );
      caught = await boundUnanswered(item.id, first);
    }
    expect(caught.length, `a kill landed between a purchase's bind and its completion (${TRIES} tries)`).toBeGreaterThan(0);
    const answered = first.filter((r) => r?.data?.buyItem).map((r) => r!.data!.buyItem);
    expect(answered.length).toBeGreaterThanOrEqual(4);

    later.offsetMs = UNBOUND_IS_FINAL_MS + 1_000;
    const retries = await Promise.all(buyers.map((_, i) => (first[i]?.data?.buyItem ? first[i]! : buy(i)(retrier))));
    const final = new Map<number, { id: string } | string>();
    retries.forEach((r, i) => final.set(i, r.data?.buyItem ? { id: keyOf(r.data.buyItem.id) } : String(r.errors?.[0]?.extensions?.code)));
    // A purchase caught bound and unanswered is its retry's answer, completed: not a second purchase, not a refusal.
    for (const { buyer, purchaseId } of caught) {
      expect([buyer, final.get(buyer)]).toEqual([buyer, { id: purchaseId }]);
      expect((await cqlRow(retrier, 'SELECT status FROM purchases WHERE id = ?', [uuid(purchaseId)]))?.status).toBe('COMPLETED');
    }
    // An acknowledged purchase answers its retry with itself.
    const ackIndex = first.findIndex((r) => r?.data?.buyItem);
    expect((await buy(ackIndex)(retrier)).data?.buyItem.id).toBe(first[ackIndex]!.data!.buyItem.id);

    const bought = [...final.values()].filter((v): v is { id: string } => typeof v === 'object');
    const refused = [...final.values()].filter((v) => typeof v === 'string');
    expect(refused.every((code) => code === 'NOT_ENOUGH_UNITS')).toBe(true);
    expect(new Set(bought.map((p) => p.id)).size).toBe(bought.length);
    expect(bought.length).toBe(20);

    const master = await cqlRow(retrier, 'SELECT available_units FROM items WHERE id = ?', [uuid(item.id)]);
    expect(master?.available_units).toBe(0);
    expect(new Set((await boundTo(item.id)).keys())).toEqual(new Set(bought.map((p) => p.id)));
    expect((await gqlOk(retrier, ItemDocument, { itemId: item.id }, seller!.token)).item?.availableUnits).toBe(0);
  }, 180_000);
});
