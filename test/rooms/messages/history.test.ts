/**
 * History across day buckets, with injected time: empty days are skipped,
 * pages go both ways without repeats or gaps, and a long history pages to its
 * first message at a bounded number of queries per page.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { HistoryDocument, PostMessageDocument, RoomDocument } from '../../generated/graphql.js';
import { ManualClock, startApp } from '../../testkit/app.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { Limits } from '../../../src/limits.js';
import { catchUpSettleMs } from '../../../src/resolvers/rooms/model.js';
import { eventually } from '../../testkit/poll.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { roomWith } from '../../testkit/data/rooms.js';
import { seedHistory, spreadOverDays } from '../../testkit/data/seed-history.js';
import { recordCql } from '../../testkit/faults/cql-spy.js';
import { cqlRows } from '../../testkit/cql.js';

const DAY = 86_400_000;
let app: App;
let clock: ManualClock;
let alice: TestUser;

beforeAll(async () => {
  clock = new ManualClock(new Date('2025-02-25T08:00:00Z'));
  app = await startApp({ clock });
  alice = await signUp(app, { firstname: 'Alice', lastname: 'Liddell' });
});

type Page = Awaited<ReturnType<typeof historyPage>>;
async function historyPage(name: string, args: { first?: number; after?: string; last?: number; before?: string }) {
  const before = app.services.db.queryCount;
  const data = await gqlOk(app, HistoryDocument, { roomName: name, ...args }, alice.token);
  return { ...data.room!.messages, queries: app.services.db.queryCount - before };
}

/** Walks the whole history newest→oldest with `first`, or oldest→newest with `last`. */
async function walk(name: string, dir: 'back' | 'forward', size: number): Promise<{ ids: string[]; pages: Page[] }> {
  const ids: string[] = [];
  const pages: Page[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page =
      dir === 'back' ? await historyPage(name, { first: size, after: cursor }) : await historyPage(name, { last: size, before: cursor });
    pages.push(page);
    ids.push(...page.edges.map((e) => e.node.id));
    const more = dir === 'back' ? page.pageInfo.hasNextPage : page.pageInfo.hasPreviousPage;
    if (!more) break;
    cursor = page.pageInfo.endCursor!;
    if (pages.length > 10_000) throw new Error('paging does not end');
  }
  return { ids, pages };
}

describe('history over days with empty days between', () => {
  it('pages newest→oldest and oldest→newest: every message exactly once, in order, empty days skipped', async () => {
    clock.set('2025-02-25T08:00:00Z');
    const name = await roomWith(app, alice);
    // Day offsets with messages; 2, 4, 5 and 8 stay empty. The walk crosses February into March.
    const plan: Array<[number, number]> = [
      [0, 3],
      [1, 2],
      [3, 4],
      [6, 1],
      [7, 3],
      [9, 2],
    ];
    const posted: Array<{ id: string; content: string }> = [];
    for (const [day, count] of plan) {
      for (let i = 0; i < count; i++) {
        clock.set(new Date(Date.parse('2025-02-25T08:00:00Z') + day * DAY + i * 60_000));
        const content = `d${day}-${i}`;
        const m = (await gqlOk(app, PostMessageDocument, { roomName: name, content }, alice.token)).postMessage;
        expect(m.createdAt.slice(0, 10)).toBe(new Date(Date.parse('2025-02-25T00:00:00Z') + day * DAY).toISOString().slice(0, 10));
        posted.push({ id: m.id, content });
      }
    }
    const oldestFirst = posted.map((p) => p.id);
    const newestFirst = [...oldestFirst].reverse();
    // Catch-up (oldest first) shows messages once they have settled.
    clock.advance(DAY);

    // The bucket table lists the six days used, not the empty ones.
    const buckets = await cqlRows(app, 'SELECT time_bucket FROM messages_bucket WHERE room_name = ?', [name]);
    expect(buckets.map((r) => r.time_bucket)).toEqual([20250306, 20250304, 20250303, 20250228, 20250226, 20250225]);

    for (const size of [1, 2, 3, 5, 50]) {
      const back = await walk(name, 'back', size);
      expect(back.ids, `back, pages of ${size}`).toEqual(newestFirst);
      const forward = await walk(name, 'forward', size);
      expect(forward.ids, `forward, pages of ${size}`).toEqual(oldestFirst);
      // createdAt strictly ordered within and across pages.
      const times = back.pages.flatMap((p) => p.edges.map((e) => Date.parse(e.node.createdAt)));
      expect(times.every((t, i) => i === 0 || t <= times[i - 1]!)).toBe(true);
    }
    // A page of 50 that holds all 15 messages over six buckets: room, one listing, six partitions.
    const all = await historyPage(name, { first: 50 });
    expect(all.edges).toHaveLength(15);
    expect(all.queries).toBe(1 + 1 + 6);
  });

  it('never puts a message before the room existed, even when the server clock lags', async () => {
    clock.set('2025-04-10T12:00:00Z');
    const name = await roomWith(app, alice);
    clock.set('2025-04-10T11:59:00Z'); // this server's clock is a minute behind the one that created the room
    const m = (await gqlOk(app, PostMessageDocument, { roomName: name, content: 'from the past' }, alice.token)).postMessage;
    const room = (await gqlOk(app, RoomDocument, { roomName: name }, alice.token)).room!;
    expect(Date.parse(m.createdAt)).toBeGreaterThanOrEqual(Date.parse(room.createdAt));
    expect((await historyPage(name, {})).edges.map((e) => e.node.id)).toEqual([m.id]);
  });
});

describe('catching up while writes commit out of order', () => {
  /**
   * Posts 'slow', whose write stalls after its id is taken, then 'fast', which
   * takes a later id and commits meanwhile. `whileStalled` runs once 'fast' is
   * stored and 'slow' is not; then 'slow' commits and both posts answer.
   */
  async function outOfOrder(name: string, whileStalled: () => Promise<void>) {
    const db = app.services.db;
    const batch = db.batch;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let stalled!: () => void;
    const isStalled = new Promise<void>((resolve) => (stalled = resolve));
    db.batch = async function (queries, opts) {
      if (queries.some((q) => q.stmt.cql.includes('INSERT INTO chat_room_messages') && q.params[3] === 'slow')) {
        stalled();
        await gate;
      }
      return batch.call(this, queries, opts);
    };
    try {
      clock.advance(1_000);
      const slow = gql(app, PostMessageDocument, { roomName: name, content: 'slow' }, alice.token);
      await isStalled;
      clock.advance(1_000);
      // Its answer waits for 'slow' to be published first; its write does not.
      const fast = gql(app, PostMessageDocument, { roomName: name, content: 'fast' }, alice.token);
      await eventually(async () => (await storedContents(name)).includes('fast'), { what: "'fast' to be stored" });
      expect(await storedContents(name)).not.toContain('slow');
      await whileStalled();
      release();
      expect((await slow).errors).toBeUndefined();
      expect((await fast).errors).toBeUndefined();
    } finally {
      db.batch = batch;
      release();
    }
  }

  async function storedContents(name: string): Promise<string[]> {
    const bucket = Number(clock.now().toISOString().slice(0, 10).replaceAll('-', ''));
    const rows = await cqlRows(app, 'SELECT content FROM chat_room_messages WHERE room_name = ? AND time_bucket = ?', [name, bucket]);
    return rows.map((r) => r.content as string);
  }

  /** A client catching up from `cursor` (the room's start without one) until it has everything served so far; returns the new cursor. */
  async function catchUp(name: string, cursor: string | undefined, into: string[]): Promise<string | undefined> {
    for (;;) {
      const page = await historyPage(name, { last: 50, before: cursor });
      into.push(...page.edges.map((e) => e.node.content!));
      if (page.edges.length > 0) cursor = page.pageInfo.endCursor!;
      if (!page.pageInfo.hasPreviousPage) return cursor;
    }
  }

  it('never steps over a message whose write commits after a later one', async () => {
    clock.set('2025-06-01T10:00:00Z');
    const name = await roomWith(app, alice);
    await gqlOk(app, PostMessageDocument, { roomName: name, content: 'seen' }, alice.token);
    clock.advance(60_000);
    // The client has caught up to 'seen', and keeps the cursor.
    const seen: string[] = [];
    let cursor: string | undefined = (await historyPage(name, { last: 1 })).edges[0]!.cursor;

    await outOfOrder(name, async () => {
      cursor = await catchUp(name, cursor, seen);
      expect(seen).toEqual(['fast']); // the latest is shown at once...
    });
    // ...but its cursor has not stepped past the unsettled part: catching up again brings 'slow',
    // which committed later with an earlier id, and 'fast' again (clients key messages by id).
    cursor = await catchUp(name, cursor, seen);
    expect(seen).toEqual(['fast', 'slow', 'fast']);
    // Once everything has settled, catching up from the new cursor repeats nothing.
    clock.advance(catchUpSettleMs(app.services.config.cassandra.requestTimeoutMs) + 1_000);
    const later: string[] = [];
    await catchUp(name, await catchUp(name, cursor, []), later);
    expect(later).toEqual([]);
  });

  it('never loses a late message when catching up from the top of a newest-first page', async () => {
    clock.set('2025-06-02T10:00:00Z');
    const name = await roomWith(app, alice);
    let top = '';
    await outOfOrder(name, async () => {
      // The client opens the room: the newest page shows 'fast' and not yet 'slow'.
      const page = await historyPage(name, { first: 10 });
      expect(page.edges.map((e) => e.node.content)).toEqual(['fast']);
      top = page.edges[0]!.cursor;
    });
    clock.advance(60_000);
    const got: string[] = [];
    await catchUp(name, top, got);
    // 'fast' again (the client has it, and keys messages by id), and 'slow', which it never saw.
    expect(got).toEqual(['slow', 'fast']);
  });

  it('posts a retry afresh once the first attempt can no longer write, so its message never lands below what catch-up served', async () => {
    clock.set('2025-06-03T10:00:00Z');
    const name = await roomWith(app, alice);
    const send = (content: string) => gql(app, PostMessageDocument, { roomName: name, content, clientMessageId: 'k-1' }, alice.token);
    // The first attempt claims its clientMessageId, then its write fails.
    const db = app.services.db;
    const batch = db.batch;
    db.batch = async function (queries, opts) {
      if (queries.some((q) => q.params[3] === 'lost')) {
        db.batch = batch;
        throw new Error('write failed');
      }
      return batch.call(this, queries, opts);
    };
    try {
      expect(codes(await send('lost'))).toEqual(['INTERNAL_SERVER_ERROR']);
    } finally {
      db.batch = batch;
    }
    clock.advance(1_000);
    const after = (await gqlOk(app, PostMessageDocument, { roomName: name, content: 'after' }, alice.token)).postMessage;

    // Past the write window, the claimed id may no longer be written, and the claim is not dead yet: try again later.
    const { requestTimeoutMs } = app.services.config.cassandra;
    clock.advance(Limits.room.messageWriteWindowMs + 1_000);
    expect(codes(await send('lost'))).toEqual(['CONFLICT']);

    // A client catches up meanwhile and steps past 'after'.
    clock.advance(catchUpSettleMs(requestTimeoutMs));
    const got: string[] = [];
    const cursor = await catchUp(name, undefined, got);
    expect(got).toEqual(['after']);

    // Past the commit horizon the claim is dead: the retry posts with a new id, after 'after', and later retries get it.
    const retry = await send('lost');
    expect(retry.errors).toBeUndefined();
    const posted = retry.data!.postMessage;
    expect(Date.parse(posted.createdAt)).toBeGreaterThan(Date.parse(after.createdAt));
    expect((await send('lost')).data?.postMessage.id).toBe(posted.id);
    clock.advance(catchUpSettleMs(requestTimeoutMs));
    await catchUp(name, cursor, got);
    expect(got).toEqual(['after', 'lost']);
  });
});

describe('the bucket table', () => {
  it('is written the first time an instance posts into a bucket, not on every post', async () => {
    clock.set('2025-05-01T10:00:00Z');
    const name = await roomWith(app, alice);
    const other = await startApp({ clock });
    const bucketInserts = (spy: ReturnType<typeof recordCql>) =>
      spy.writes().filter((c) => c.startsWith('INSERT INTO messages_bucket')).length;
    const postOn = async (on: App, day: string, content: string) => {
      clock.set(day);
      await gqlOk(on, PostMessageDocument, { roomName: name, content }, alice.token);
    };
    const spy = recordCql(app);
    const spyOther = recordCql(other);
    try {
      for (let i = 0; i < 3; i++) await postOn(app, `2025-05-01T1${i}:00:00Z`, `first day ${i}`);
      expect(bucketInserts(spy)).toBe(1);
      for (let i = 0; i < 3; i++) await postOn(app, `2025-05-02T1${i}:00:00Z`, `second day ${i}`);
      expect(bucketInserts(spy)).toBe(2);
      // Another instance has its own memory: it records the bucket once too (an idempotent insert).
      for (let i = 0; i < 2; i++) await postOn(other, `2025-05-02T2${i}:00:00Z`, `other ${i}`);
      expect(bucketInserts(spyOther)).toBe(1);
    } finally {
      spy.stop();
      spyOther.stop();
    }
    const page = await historyPage(name, {});
    expect(page.edges).toHaveLength(8);
  });
});

describe('a long history', () => {
  it('pages 10,000 messages over 60 days to the first message, at a bounded query count per page', async () => {
    const start = new Date('2024-01-01T00:00:00Z');
    clock.set(start);
    const name = await roomWith(app, alice);
    const room = { name, createdAt: start };
    const author = { login: alice.login, firstname: 'Alice', lastname: 'Liddell' };
    // Every seventh day is empty.
    const seeded = await seedHistory(app, room, author, spreadOverDays(start, 60, 10_000, (d) => d % 7 === 3));
    clock.set(new Date(start.getTime() + 61 * DAY));

    const { ids, pages } = await walk(name, 'back', 200);
    expect(ids).toHaveLength(10_000);
    expect(new Set(ids).size).toBe(10_000);
    expect(ids.at(-1)).toBe(pages.at(-1)!.edges.at(-1)!.node.id);
    expect(pages.at(-1)!.edges.at(-1)!.node.content).toBe(seeded[0]!.content);
    expect(pages.at(0)!.edges.at(0)!.node.content).toBe(seeded.at(-1)!.content);
    // ~193 messages a day: a page of 200 spans at most three days. Room, partition reads, at most one listing.
    const worst = Math.max(...pages.map((p) => p.queries));
    expect(worst).toBeLessThanOrEqual(1 + 3 + 1);
  }, 300_000);
});
