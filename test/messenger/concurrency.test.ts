/**
 * The unread count and the last message under concurrency, against the real
 * node: many clients at once, then the invariant, exactly.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { conversationKey, directMessage } from '../../src/resolvers/messenger/model.js';
import { newTimeUuid } from '../../src/timeuuids.js';
import { ConversationDocument, InboxSummaryDocument, MarkConversationReadDocument } from '../generated/graphql.js';
import { ManualClock, startApp } from '../testkit/app.js';
import { gqlOk } from '../testkit/http.js';
import { onNextStatement } from '../testkit/faults/statement-faults.js';
import { seedUserRow, signUp, uniqueLogin, type TestUser } from '../testkit/data/users.js';
import { send, ticksOf, wholeHistory } from '../testkit/data/messenger.js';

let app1: App;
let app2: App;
beforeAll(async () => {
  // Two servers: the clients' requests spread over both and over many connections.
  [app1, app2] = await Promise.all([startApp(), startApp()]);
});
afterEach(() => {
  vi.restoreAllMocks();
});

const serverFor = (i: number) => (i % 2 === 0 ? app1 : app2);
const newest = (ids: string[]) => ids.reduce((x, y) => (ticksOf(y) > ticksOf(x) ? y : x));
const oldest = (ids: string[]) => ids.reduce((x, y) => (ticksOf(y) < ticksOf(x) ? y : x));

async function conversationOf(viewer: TestUser, partner: TestUser) {
  return (await gqlOk(app1, ConversationDocument, { with: partner.login }, viewer.token)).conversation!;
}

describe('unread counts stay exact', () => {
  it('counts 100 concurrent messages from A to B exactly, and B’s history holds each once', async () => {
    const [a, b] = [await signUp(app1), await signUp(app1)];
    const sent = await Promise.all(Array.from({ length: 100 }, (_, i) => send(serverFor(i), a, b, `message ${i}`)));
    const ids = sent.map((m) => m.id);
    expect(new Set(ids).size).toBe(100);

    const bView = await conversationOf(b, a);
    expect(bView.unreadCount).toBe(100);
    expect(bView.firstUnreadAt).toBe(sent.find((m) => m.id === oldest(ids))!.createdAt);
    expect(bView.lastMessage?.id).toBe(newest(ids));
    expect((await conversationOf(a, b)).lastMessage?.id).toBe(newest(ids));

    const { messages } = await wholeHistory(app2, b, a, 30);
    expect(messages).toHaveLength(100);
    expect(new Set(messages.map((m) => m.id))).toEqual(new Set(ids));
    // Newest first, by message time.
    const times = messages.map((m) => ticksOf(m.id));
    expect(times).toEqual([...times].sort((x, y) => (x > y ? -1 : x < y ? 1 : 0)));
    expect(new Set(messages.map((m) => m.content))).toEqual(new Set(sent.map((m) => m.content)));
  });

  // Three rounds, each on a fresh pair: more interleavings of reads between sends.
  it.each([1, 2, 3])(
    'markConversationRead racing with 50 concurrent sends (round %i): unread is exactly the messages after the read point',
    async () => {
      const [a, b] = [await signUp(app1), await signUp(app1)];
      const earlier = [];
      for (let i = 0; i < 10; i++) earlier.push(await send(app1, a, b, `before ${i}`));

      // 50 sends at once; B marks the conversation read at the start and again every third one that lands,
      // so reads keep falling between other sends.
      // Each read is kept with the newest message that had landed when it was sent: its read point is at least that.
      const landed = earlier.map((m) => m.id);
      const reads: Array<Promise<{ result: { readUpTo?: string | null; unreadCount: number }; landedBefore: string }>> = [];
      const read = (app: App) => {
        const landedBefore = newest(landed);
        return gqlOk(app, MarkConversationReadDocument, { with: a.login }, b.token).then((d) => ({ result: d.markConversationRead, landedBefore }));
      };
      reads.push(read(app2));
      const racing = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          send(serverFor(i), a, b, `racing ${i}`).then((m) => {
            landed.push(m.id);
            if ((landed.length - earlier.length) % 3 === 0) reads.push(read(serverFor(landed.length - earlier.length)));
            return m;
          }),
        ),
      );
      const readAnswers = await Promise.all(reads);
      const readResults = readAnswers.map((r) => r.result);
      const sent = [...earlier, ...racing];
      const all = sent.map((m) => m.id);

      // The read point: the newest message any read covered; read points only move forward.
      const final = await conversationOf(b, a);
      const points = readResults.map((r) => r.readUpTo).filter((p): p is string => Boolean(p));
      // One read at the start and one after every third send that landed; each covers at least the 10 earlier messages.
      expect(points).toHaveLength(1 + Math.floor(50 / 3));
      expect(final.readUpTo).toBe(newest(points));
      const readPoint = ticksOf(final.readUpTo!);

      // Every message is either covered by the read (at or before the point) or counted unread, once.
      const unread = all.filter((id) => ticksOf(id) > readPoint);
      expect(final.unreadCount).toBe(unread.length);
      expect(final.firstUnreadAt).toBe(unread.length ? sent.find((m) => m.id === oldest(unread))!.createdAt : null);
      // What a read answers counts what is unread after its own read point, read back while others race: not a
      // number the test can know, but never more than the messages after the newest one landed when it was sent.
      for (const { result, landedBefore } of readAnswers) {
        expect(all).toContain(result.readUpTo);
        expect(result.unreadCount).toBeLessThanOrEqual(all.filter((id) => ticksOf(id) > ticksOf(landedBefore)).length);
      }
      // The partner sees the same read point.
      expect((await conversationOf(a, b)).partnerReadUpTo).toBe(final.readUpTo);

      // Nothing was lost from the history, and later messages still count.
      const { messages } = await wholeHistory(app1, b, a);
      expect(messages.map((m) => m.id).sort()).toEqual([...all].sort());
      const later = await send(app2, a, b, 'after the race');
      expect((await conversationOf(b, a)).unreadCount).toBe(unread.length + 1);
      const cleared = (await gqlOk(app1, MarkConversationReadDocument, { with: a.login }, b.token)).markConversationRead;
      expect(cleared).toMatchObject({ unreadCount: 0, readUpTo: later.id });
    },
  );
  it('a read that finds nothing left unread, because another read just landed, answers that read point', async () => {
    const [a, b] = [await signUp(app1), await signUp(app1)];
    const last = (await Promise.all([1, 2, 3].map((i) => send(app1, a, b, `m${i}`)))).map((m) => m.id);
    // B's second device reads on app2. Its row is read first; before its unread ids are read, the first device's
    // read lands whole on app1: the ids are gone, and the row it already read has no read point yet.
    let firstRead: { readUpTo?: string | null } | undefined;
    const staged = onNextStatement(app2, /FROM inbox_unread WHERE owner = \? AND partner = \?/, async () => {
      firstRead = (await gqlOk(app1, MarkConversationReadDocument, { with: a.login }, b.token)).markConversationRead;
    });
    const second = (await gqlOk(app2, MarkConversationReadDocument, { with: a.login }, b.token)).markConversationRead;
    expect(staged.fired()).toBe(true);
    expect(firstRead).toMatchObject({ readUpTo: newest(last), unreadCount: 0 });
    expect(second).toMatchObject({ readUpTo: newest(last), unreadCount: 0 });
  });
});

describe('the last message follows message time', () => {
  it('both users sending to each other at once: both inbox rows end with the same, later message', async () => {
    const [a, b] = [await signUp(app1), await signUp(app1)];
    const sent = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? send(serverFor(i >> 1), a, b, `a${i}`) : send(serverFor(i >> 1), b, a, `b${i}`))),
    );
    const last = newest(sent.map((m) => m.id));
    const [aView, bView] = [await conversationOf(a, b), await conversationOf(b, a)];
    expect(aView.lastMessage).toEqual(bView.lastMessage);
    expect(aView.lastMessage?.id).toBe(last);
    expect(aView.lastMessageAt).toBe(sent.find((m) => m.id === last)!.createdAt);
    expect([aView.unreadCount, bView.unreadCount]).toEqual([20, 20]);
  });

  it('a message that arrives after a newer one does not replace it', async () => {
    const clock = new ManualClock(new Date('2026-05-01T12:00:00Z'));
    const timed = await startApp({ clock });
    const [a, b] = [await signUp(timed), await signUp(timed)];
    const newer = await send(timed, a, b, 'sent at noon');
    // A server whose clock is behind writes an older message afterwards.
    clock.set('2026-05-01T11:59:00Z');
    const older = await send(timed, b, a, 'sent a minute earlier, arrived later');
    for (const [viewer, partner] of [
      [a, b],
      [b, a],
    ] as const) {
      const view = (await gqlOk(timed, ConversationDocument, { with: partner.login }, viewer.token)).conversation!;
      expect(view.lastMessage?.id).toBe(newer.id);
    }
    const { messages } = await wholeHistory(timed, a, b);
    expect(messages.map((m) => m.id)).toEqual([newer.id, older.id]);
  });
});

describe('the inbox', () => {
  it('loads 500 partners with one read of the inbox partition and one of the unread partition', async () => {
    const me = await signUp(app1);
    const { stores, db } = app1.services;
    // Seed through the stores (the read below goes through the API): 500 partners, one message each.
    const partners = Array.from({ length: 500 }, () => uniqueLogin('p'));
    const start = Date.parse('2026-01-01T00:00:00Z');
    for (let i = 0; i < partners.length; i += 50) {
      await Promise.all(
        partners.slice(i, i + 50).map(async (login, j) => {
          const created = await seedUserRow(app1, login, new Date(start));
          expect(created).toBe(true);
          const at = new Date(start + (i + j) * 60_000);
          const message = directMessage(newTimeUuid(at, 'microsecond'), login, me.login, `hello from ${login}`);
          await stores.directMessages.send(conversationKey(login, me.login), message);
        }),
      );
    }

    const execute = vi.spyOn(db, 'execute');
    const inbox = (await gqlOk(app1, InboxSummaryDocument, { first: 500 }, me.token)).conversations;
    const inboxReads = execute.mock.calls.filter(([stmt]) => /\bFROM inbox\b/.test(stmt.cql));
    const unreadReads = execute.mock.calls.filter(([stmt]) => /\bFROM inbox_unread\b/.test(stmt.cql));
    const messageReads = execute.mock.calls.filter(([stmt]) => /\bdirect_messages\b/.test(stmt.cql));
    expect(inboxReads).toHaveLength(1);
    expect(inboxReads[0]![0].cql).toMatch(/WHERE owner = \?$/);
    // The counts of every conversation: one read of the owner's unread partition, grouped on the node.
    expect(unreadReads).toHaveLength(1);
    expect(unreadReads[0]![0].cql).toMatch(/WHERE owner = \? GROUP BY partner$/);
    expect(messageReads).toHaveLength(0);

    expect(inbox.pageInfo.hasNextPage).toBe(false);
    expect(inbox.edges.map((e) => e.node.partner.login)).toEqual([...partners].reverse());
    expect(inbox.edges.every((e) => e.node.unreadCount === 1)).toBe(true);
    expect(inbox.edges[0]!.node.lastMessage?.content).toBe(`hello from ${partners[499]}`);
  });
});
