/**
 * Search within a room (issue 15, part 4), over HTTP against the real node: a
 * term of 3 messages found page by page in a room of 10,000 messages over 60
 * days at a bounded number of queries per page, terms joined by AND, case,
 * compatibility forms and punctuation folded, the bound on days per page
 * exercised on a room of 130 days, edits re-indexed, hidden, deleted and
 * system messages never found, and who may search with what.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../../src/app.js';
import { DeleteMessageDocument, EditMessageDocument, HideMessageDocument, SearchMessagesDocument } from '../../../generated/graphql.js';
import { ManualClock, startApp } from '../../../testkit/app.js';
import { codes, gql, gqlOk } from '../../../testkit/http.js';
import { signUp, type TestUser } from '../../../testkit/data/users.js';
import { post, roomWith } from '../../../testkit/data/rooms.js';
import { seedHistory, spreadOverDays } from '../../../testkit/data/seed-history.js';
import { recordCql } from '../../../testkit/faults/cql-spy.js';
import { cqlRow } from '../../../testkit/cql.js';
import { decodeMessageId } from '../../../../src/resolvers/rooms/ids.js';
import { encodeHistoryCursor } from '../../../../src/pagination.js';
import { newTimeUuid } from '../../../../src/timeuuids.js';
import { Limits } from '../../../../src/limits.js';

const DAY = 86_400_000;
const { bucketsPerPage, maxQueryTerms, queryMaxLength } = Limits.room.search;

let app: App;
let clock: ManualClock;
let alice: TestUser; // creates the rooms
let bob: TestUser;
let dave: TestUser; // takes part in no room

beforeAll(async () => {
  clock = new ManualClock(new Date('2025-03-01T08:00:00Z'));
  app = await startApp({ clock });
  [alice, bob, dave] = await Promise.all([
    signUp(app, { firstname: 'Alice', lastname: 'Liddell' }),
    signUp(app, { firstname: 'Bob', lastname: 'Builder' }),
    signUp(app, { firstname: 'Dave' }),
  ]);
});

/** One page of a search, with the CQL it cost: every query, and the day partitions read through the index. */
async function searchPage(user: TestUser, roomName: string, query: string, first?: number, after?: string) {
  const spy = recordCql(app);
  let data;
  try {
    data = await gqlOk(app, SearchMessagesDocument, { roomName, query, first, after }, user.token);
  } finally {
    spy.stop();
  }
  const statements = spy.statements();
  const page = data.searchMessages;
  return {
    ...page,
    contents: page.edges.map((e) => e.node.content),
    queries: statements.length,
    dayReads: statements.filter((s) => s.includes('terms CONTAINS ?')).length,
  };
}
type Page = Awaited<ReturnType<typeof searchPage>>;

/** Every page of a search, following endCursor while hasNextPage. */
async function searchAll(roomName: string, query: string, first?: number): Promise<Page[]> {
  const pages: Page[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await searchPage(alice, roomName, query, first, after);
    pages.push(page);
    if (!page.pageInfo.hasNextPage) return pages;
    expect(page.pageInfo.endCursor).toBeTruthy();
    after = page.pageInfo.endCursor!;
    if (pages.length > 1000) throw new Error('paging does not end');
  }
}

const contentsOf = (pages: Page[]) => pages.flatMap((p) => p.contents);

describe('a room of 10,000 messages over 60 days', () => {
  const start = new Date('2024-01-01T00:00:00Z');
  // A term ("quokka") in exactly 3 messages, on days 5, 30 and 55; "lake" in 2 of them.
  const rare = new Map([
    [5, 'A QUOKKA by the lake, again.'],
    [30, 'Quokka-spotting: Rottnest island!'],
    [55, 'Lake view… and a quokka?!'],
  ]);
  const [day5, day30, day55] = [rare.get(5)!, rare.get(30)!, rare.get(55)!];
  let name: string;

  beforeAll(async () => {
    clock.set(start);
    name = await roomWith(app, alice, [bob]);
    const author = { login: bob.login, firstname: 'Bob', lastname: 'Builder' };
    const offset = (at: Date) => at.getTime() - start.getTime();
    await seedHistory(app, { name, createdAt: start }, author, spreadOverDays(start, 60, 10_000), {
      // The 11th message of days 5, 30 and 55 (spreadOverDays puts them 7 s apart from 01:00).
      contentOf: (at, i) => (offset(at) % DAY === 3_600_000 + 10 * 7_000 && rare.get(Math.floor(offset(at) / DAY))) || `seed ${i}`,
    });
    clock.set(new Date(start.getTime() + 61 * DAY));
  }, 300_000);

  it('finds the 3 messages of a rare term page by page, newest first, at a bounded query count per page', async () => {
    for (const first of [1, 2, 10]) {
      const pages = await searchAll(name, 'quokka', first);
      expect(contentsOf(pages), `pages of ${first}`).toEqual([day55, day30, day5]);
      expect(pages).toHaveLength(Math.ceil(3 / first));
      for (const page of pages) {
        // The room's row, one listing of its days, and at most bucketsPerPage day partitions.
        expect(page.dayReads).toBeLessThanOrEqual(bucketsPerPage);
        expect(page.queries).toBe(1 + 1 + page.dayReads);
      }
      const times = pages.flatMap((p) => p.edges.map((e) => Date.parse(e.node.createdAt)));
      expect(times.every((t, i) => i === 0 || t < times[i - 1]!)).toBe(true);
    }
    // All of it in one page: every one of the 60 days read once.
    const [whole] = await searchAll(name, 'quokka', 10);
    expect(whole!.dayReads).toBe(60);
    expect(whole!.queries).toBe(62);
    // Pages of 1, read in batches of 1, 2, 4, then 6 days: the first page reads days 59–29 (day 30 tells it a
    // second page exists), the second goes on below day 55's message in its own day, then days 54–0, the third
    // below day 30's message, then days 29–0.
    expect((await searchAll(name, 'quokka', 1)).map((p) => p.dayReads)).toEqual([31, 1 + 55, 1 + 30]);
  });

  it('joins terms with AND, and folds case, compatibility forms and punctuation', async () => {
    const found = async (query: string) => contentsOf(await searchAll(name, query));
    expect(await found('LAKE quokka')).toEqual([day55, day5]);
    expect(await found('quokka, ROTTNEST!!!')).toEqual([day30]);
    expect(await found('  …Quokka?  ')).toEqual([day55, day30, day5]);
    expect(await found('ｑｕｏｋｋａ')).toEqual([day55, day30, day5]);
    expect(await found('quokka QUOKKA quokka')).toEqual([day55, day30, day5]);
    expect(await found('quokka-spotting')).toEqual([day30]);
    expect(await found('lake island')).toEqual([]);
  });

  it('pages a term of every message newest first through edge cursors, a day read per page', async () => {
    const first = await searchPage(alice, name, 'seed', 50);
    const second = await searchPage(alice, name, 'seed', 50, first.pageInfo.endCursor!);
    expect(first.pageInfo.hasNextPage).toBe(true);
    expect(first.pageInfo.endCursor).toBe(first.edges.at(-1)!.cursor);
    const ids = [...first.edges, ...second.edges].map((e) => e.node.id);
    expect(new Set(ids).size).toBe(100);
    const times = [...first.edges, ...second.edges].map((e) => Date.parse(e.node.createdAt));
    expect(times.every((t, i) => i === 0 || t < times[i - 1]!)).toBe(true);
    // ~167 messages a day: the newest day alone fills a page, and the next page goes on inside it.
    expect([first.dayReads, second.dayReads]).toEqual([1, 1]);
    // The room, the listing and the day; then the room and the rest of the cursor's day, which fills the page.
    expect([first.queries, second.queries]).toEqual([3, 2]);
  });

  it('ends a search that matches nothing', async () => {
    const pages = await searchAll(name, 'wombat', 50);
    expect(pages).toHaveLength(1);
    expect(pages[0]!.edges).toEqual([]);
    expect(pages[0]!.pageInfo.endCursor).toBeNull();
    expect(pages[0]!.queries).toBe(1 + 1 + 60);
  });
});

describe('the bound on days read per page', () => {
  const start = new Date('2023-01-01T00:00:00Z');
  let name: string;

  beforeAll(async () => {
    clock.set(start);
    name = await roomWith(app, alice);
    const author = { login: alice.login, firstname: 'Alice', lastname: 'Liddell' };
    // One message a day for 130 days; the one of day 100 mentions a platypus.
    await seedHistory(app, { name, createdAt: start }, author, spreadOverDays(start, 130, 130), {
      contentOf: (_at, i) => (i === 100 ? 'A platypus, at last' : `dull day ${i}`),
    });
    clock.set(new Date(start.getTime() + 131 * DAY));
  }, 120_000);

  it('returns what a page found within its days, and resumes below the last day it read', async () => {
    const pages = await searchAll(name, 'platypus', 10);
    // Days 129–70 (the platypus is on day 100), 69–10, then 9–0.
    expect(pages.map((p) => p.contents)).toEqual([['A platypus, at last'], [], []]);
    expect(pages.map((p) => p.pageInfo.hasNextPage)).toEqual([true, true, false]);
    expect(pages.map((p) => p.dayReads)).toEqual([bucketsPerPage, bucketsPerPage, 10]);
    expect(pages.map((p) => p.queries)).toEqual([62, 62, 12]);
    // The first page's endCursor is past its last edge; the second's stands without an edge.
    expect(pages[0]!.pageInfo.endCursor).not.toBe(pages[0]!.edges[0]!.cursor);
    expect(pages[1]!.pageInfo.startCursor).toBeNull();
    expect(pages[1]!.pageInfo.endCursor).toBeTruthy();
  });

  it('ends a search that matches nothing after reading every day once', async () => {
    const pages = await searchAll(name, 'wombat', 10);
    expect(pages.map((p) => p.edges.length)).toEqual([0, 0, 0]);
    expect(pages.reduce((sum, p) => sum + p.dayReads, 0)).toBe(130);
  });
});

describe('what search finds as messages change', () => {
  /** The stored terms of a message, as Cassandra holds them. */
  async function storedTerms(id: string) {
    const key = decodeMessageId('id', id);
    const row = await cqlRow(app, 'SELECT terms FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [
      key.roomName,
      key.bucket,
      key.messageId,
    ]);
    return row?.terms ? [...(row.terms as Set<string>)].sort() : null;
  }
  const found = async (room: string, query: string, first?: number) => contentsOf(await searchAll(room, query, first));

  it('finds an edited message by its current words only', async () => {
    clock.set('2025-03-01T08:00:00Z');
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, bob, room, 'The kangaroo jumps');
    expect(await storedTerms(m.id)).toEqual(['jumps', 'kangaroo', 'the']);
    expect(await found(room, 'kangaroo')).toEqual(['The kangaroo jumps']);

    clock.advance(1_000);
    await gqlOk(app, EditMessageDocument, { messageId: m.id, content: 'The WALLABY jumps' }, bob.token);
    expect(await found(room, 'kangaroo')).toEqual([]);
    expect(await found(room, 'wallaby jumps')).toEqual(['The WALLABY jumps']);
    expect((await searchPage(alice, room, 'wallaby')).edges[0]!.node.version).toBe(1);

    // An edit down to no words at all leaves nothing to find the message by.
    clock.advance(1_000);
    await gqlOk(app, EditMessageDocument, { messageId: m.id, content: '!!!' }, bob.token);
    expect(await found(room, 'wallaby')).toEqual([]);
    expect(await storedTerms(m.id)).toBeNull();
  });

  it('never finds hidden, deleted or system messages', async () => {
    clock.set('2025-03-02T08:00:00Z');
    const room = await roomWith(app, alice, [bob]); // posts "Bob Builder joins the room"
    const kept = await post(app, bob, room, 'an emu, plainly');
    clock.advance(1_000);
    const deleted = await post(app, bob, room, 'emu eggs');
    clock.advance(1_000);
    const hidden = await post(app, bob, room, 'secret emu sighting');
    expect(await found(room, 'emu')).toEqual(['secret emu sighting', 'emu eggs', 'an emu, plainly']);

    await gqlOk(app, DeleteMessageDocument, { messageId: deleted.id }, bob.token);
    await gqlOk(app, HideMessageDocument, { messageId: hidden.id }, bob.token);
    expect(await found(room, 'emu')).toEqual(['an emu, plainly']);
    expect(await storedTerms(deleted.id)).toBeNull();
    expect(await storedTerms(hidden.id)).toBeNull();

    // An edit racing the hide can write terms back: search still drops the hidden message, and a page of 1
    // reads on past it to the next match.
    const key = decodeMessageId('id', hidden.id);
    await cqlRow(app, 'UPDATE chat_room_messages SET terms = ? WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [
      ['emu'],
      key.roomName,
      key.bucket,
      key.messageId,
    ]);
    expect(await found(room, 'emu', 1)).toEqual(['an emu, plainly']);
    expect(await storedTerms(kept.id)).toEqual(['an', 'emu', 'plainly']);

    expect(await found(room, 'joins')).toEqual([]);
    expect(await found(room, 'bob builder')).toEqual([]);
  });
});

describe('who may search, and with what', () => {
  let room: string;

  beforeAll(async () => {
    clock.set('2025-03-03T08:00:00Z');
    room = await roomWith(app, alice, [bob]);
    await post(app, bob, room, 'hello there');
  });

  it('serves participants only', async () => {
    expect(await searchAll(room, 'hello')).toHaveLength(1);
    expect((await searchPage(bob, room, 'HELLO')).contents).toEqual(['hello there']);
    expect(codes(await gql(app, SearchMessagesDocument, { roomName: room, query: 'hello' }, dave.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, SearchMessagesDocument, { roomName: room, query: 'hello' }))).toEqual(['UNAUTHENTICATED']);
    expect(codes(await gql(app, SearchMessagesDocument, { roomName: 'no-such-room', query: 'hello' }, alice.token))).toEqual(['NOT_FOUND']);
  });

  it('refuses bad input with BAD_USER_INPUT naming the field', async () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');
    const historyCursor = encodeHistoryCursor({ bucket: 20250303, id: newTimeUuid(new Date()).toString() });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ query: '' }, 'query'],
      [{ query: '   ' }, 'query'],
      [{ query: '?! … 🎉' }, 'query'],
      [{ query: words(maxQueryTerms + 1) }, 'query'],
      [{ query: 'x'.repeat(queryMaxLength + 1) }, 'query'],
      [{ first: 0 }, 'first'],
      [{ first: Limits.page.max + 1 }, 'first'],
      [{ after: 'not a cursor' }, 'after'],
      [{ after: historyCursor }, 'after'],
      [{ after: Buffer.from(JSON.stringify({ v: 1, sb: 20251399 })).toString('base64url') }, 'after'],
      [{ roomName: '!' }, 'roomName'],
    ];
    for (const [args, field] of cases) {
      const result = await gql(app, SearchMessagesDocument, { roomName: room, query: 'hello', ...args } as never, alice.token);
      expect(codes(result), JSON.stringify(args)).toEqual(['BAD_USER_INPUT']);
      expect(result.errors![0]!.extensions!.field, JSON.stringify(args)).toBe(field);
    }
    // The most words a query may hold is fine.
    expect((await searchPage(alice, room, words(maxQueryTerms))).edges).toEqual([]);
  });
});
