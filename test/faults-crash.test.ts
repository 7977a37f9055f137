/**
 * A server killed with SIGKILL in the middle of posts and purchases (a real
 * process, src/main.ts, no shutdown hook). Clients retry what was not
 * acknowledged, with the same idempotency key, on another instance: nothing
 * acknowledged is lost, nothing is duplicated, and no stock is taken twice.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { BuyItemDocument, HistoryDocument, ItemDocument, PostMessageDocument } from './generated/graphql.js';
import { UNBOUND_IS_FINAL_MS } from '../src/resolvers/marketplace/timing.js';
import { startApp } from './testkit/app.js';
import { startAppProcess } from './testkit/app-process.js';
import { gql, gqlOk, type GqlResult } from './testkit/http.js';
import { createItem, cqlRow, uuid } from './testkit/marketplace.js';
import { roomWith } from './testkit/rooms.js';
import { signUp, signUpMany } from './testkit/users.js';

let survivor: App;
beforeAll(async () => {
  survivor = await startApp();
});

/**
 * Sends `requests` to the doomed server, `concurrency` at a time, and kills it once
 * `killAfter` of them were answered: the ones in flight then die with it, the later
 * ones find no server. Returns each one's answer (undefined: not acknowledged).
 */
async function crashDuring<T>(requests: Array<(target: App) => Promise<GqlResult<T>>>, killAfter: number, concurrency = 8) {
  const doomed = await startAppProcess();
  const results: Array<GqlResult<T> | undefined> = new Array(requests.length);
  let answered = 0;
  let next = 0;
  let killing: Promise<void> | undefined;
  const worker = async () => {
    while (next < requests.length) {
      const i = next++;
      results[i] = await requests[i]!(doomed.app).catch(() => undefined);
      if (results[i] && ++answered >= killAfter) killing ??= doomed.kill();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await (killing ?? doomed.kill());
  return results;
}

describe('SIGKILL in the middle of posts', () => {
  it('keeps every acknowledged message, and retries with the same clientMessageId add no duplicate', async () => {
    const author = await signUp(survivor);
    const room = await roomWith(survivor, author);
    const N = 150;
    const send = (i: number) => (target: App) =>
      gql(target, PostMessageDocument, { roomName: room, content: `crash test ${i}`, clientMessageId: `post-${i}` }, author.token);
    const first = await crashDuring(Array.from({ length: N }, (_, i) => send(i)), 5);
    const acknowledged = new Map<number, string>();
    first.forEach((r, i) => r?.data?.postMessage && acknowledged.set(i, r.data.postMessage.id));
    expect(acknowledged.size).toBeGreaterThanOrEqual(5);
    expect(acknowledged.size).toBeLessThan(N);

    // The client retries everything it did not see acknowledged, on the surviving instance.
    for (let i = 0; i < N; i++) {
      if (acknowledged.has(i)) continue;
      const retry = await gqlOk(survivor, PostMessageDocument, { roomName: room, content: `crash test ${i}`, clientMessageId: `post-${i}` }, author.token);
      acknowledged.set(i, retry.postMessage.id);
    }
    // Retrying an acknowledged one answers with the original.
    const again = await gqlOk(survivor, PostMessageDocument, { roomName: room, content: 'crash test 0', clientMessageId: 'post-0' }, author.token);
    expect(again.postMessage.id).toBe(acknowledged.get(0));

    const history = (await gqlOk(survivor, HistoryDocument, { roomName: room, first: 200 }, author.token)).room!.messages.edges.map((e) => e.node);
    const posted = history.filter((m) => m.content?.startsWith('crash test '));
    expect(posted).toHaveLength(N);
    expect(new Set(posted.map((m) => m.content)).size).toBe(N);
    expect(new Set(posted.map((m) => m.id))).toEqual(new Set(acknowledged.values()));
  });
});

describe('SIGKILL in the middle of purchases', () => {
  it('never takes stock twice: every buyer ends with one purchase per key, and sold units match the purchases', async () => {
    // The buyers retry a while later: by this instance's clock, past the time after which a purchase its
    // dead request left unbound can never be bound (until then a retry is told CONFLICT: retry later).
    const later = { offsetMs: 0, now() { return new Date(Date.now() + this.offsetMs); } };
    const retrier = await startApp({ clock: later });
    const [seller, ...buyers] = await signUpMany(retrier, 31, 'crash');
    const item = await createItem(retrier, seller!, { offeredUnits: 20 });
    const buy = (i: number) => (target: App) =>
      gql(target, BuyItemDocument, { itemId: item.id, quantity: 1, clientPurchaseId: `order-${i}` }, buyers[i]!.token);
    const first = await crashDuring(buyers.map((_, i) => buy(i)), 4);
    const answered = first.filter((r) => r?.data?.buyItem).map((r) => r!.data!.buyItem);
    expect(answered.length).toBeGreaterThanOrEqual(4);

    later.offsetMs = UNBOUND_IS_FINAL_MS + 1_000;
    const retries = await Promise.all(buyers.map((_, i) => (first[i]?.data?.buyItem ? first[i]! : buy(i)(retrier))));
    const final = new Map<number, { id: string } | string>();
    retries.forEach((r, i) => final.set(i, r.data?.buyItem ? { id: r.data.buyItem.id } : String(r.errors?.[0]?.extensions?.code)));
    // An acknowledged purchase answers its retry with itself.
    const ackIndex = first.findIndex((r) => r?.data?.buyItem);
    expect((await buy(ackIndex)(retrier)).data?.buyItem.id).toBe(first[ackIndex]!.data!.buyItem.id);

    const bought = [...final.values()].filter((v): v is { id: string } => typeof v === 'object');
    const refused = [...final.values()].filter((v) => typeof v === 'string');
    expect(refused.every((code) => code === 'NOT_ENOUGH_UNITS')).toBe(true);
    expect(new Set(bought.map((p) => p.id)).size).toBe(bought.length);
    expect(bought.length).toBe(20);

    const master = await cqlRow(retrier, 'SELECT available_units, purchases FROM items WHERE id = ?', [uuid(item.id)]);
    const map = new Map([...((master?.purchases as Map<unknown, number>) ?? new Map())].map(([k, v]) => [String(k), v]));
    expect(master?.available_units).toBe(0);
    expect(new Set(map.keys())).toEqual(new Set(bought.map((p) => p.id)));
    expect((await gqlOk(retrier, ItemDocument, { itemId: item.id }, seller!.token)).item?.availableUnits).toBe(0);
  });
});
