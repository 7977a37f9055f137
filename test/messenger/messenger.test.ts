// One-to-one conversations: sending, history, the inbox and read receipts, over HTTP against the real node.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import {
  ConversationDocument,
  ConversationMessagesDocument,
  ConversationsDocument,
  MarkConversationReadDocument,
  SendDirectMessageDocument,
  type ConversationsQuery,
} from '../generated/graphql.js';
import { ManualClock, startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { signUp, uniqueLogin } from '../testkit/data/users.js';
import { send, ticksOf, timeUuidOf, wholeHistory } from '../testkit/data/messenger.js';
import { cql, TimeUuid } from '../../src/db/cassandra/client.js';
import { timeMicros } from '../../src/timeuuids.js';
import { globalIdOf } from '../testkit/ids.js';

let app: App;
beforeAll(async () => {
  app = await startApp();
});

describe('sendDirectMessage and the inbox', () => {
  it('writes the message and both inbox rows: last message for both, unread for the recipient', async () => {
    const [a, b] = [await signUp(app), await signUp(app)];
    const sent = await send(app, a, b.login.toUpperCase(), '  Hello, how are you?  ');
    expect(sent).toMatchObject({ content: 'Hello, how are you?', from: { login: a.login }, to: { login: b.login } });

    const aView = (await gqlOk(app, ConversationDocument, { with: b.login }, a.token)).conversation!;
    const bView = (await gqlOk(app, ConversationDocument, { with: a.login }, b.token)).conversation!;
    const key = globalIdOf('Conversation', [a.login, b.login].sort().join(':'));
    expect(aView).toMatchObject({ id: key, partner: { login: b.login }, unreadCount: 0, firstUnreadAt: null });
    expect(bView).toMatchObject({ id: key, partner: { login: a.login }, unreadCount: 1, firstUnreadAt: sent.createdAt });
    for (const view of [aView, bView]) {
      expect(view.lastMessage).toEqual(sent);
      expect(view.lastMessageAt).toBe(sent.createdAt);
    }

    const reply = await send(app, b, a, "I'm fine, thanks");
    const aAfter = (await gqlOk(app, ConversationDocument, { with: b.login }, a.token)).conversation!;
    const bAfter = (await gqlOk(app, ConversationDocument, { with: a.login }, b.token)).conversation!;
    expect(aAfter).toMatchObject({ unreadCount: 1, firstUnreadAt: reply.createdAt, lastMessage: { id: reply.id } });
    // Replying does not read: B still has A's message unread.
    expect(bAfter).toMatchObject({ unreadCount: 1, firstUnreadAt: sent.createdAt, lastMessage: { id: reply.id } });
  });

  it('lists the inbox most recent conversation first, page by page', async () => {
    const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
    const timed = await startApp({ clock });
    const me = await signUp(timed);
    const partners = await Promise.all(Array.from({ length: 5 }, () => signUp(timed)));
    for (const p of partners) {
      clock.advance(60_000);
      await send(timed, p, me, `from ${p.login}`);
    }
    // A new message moves its conversation to the top.
    clock.advance(60_000);
    await send(timed, me, partners[1]!, 'bump');
    const expected = [partners[1], partners[4], partners[3], partners[2], partners[0]].map((p) => p!.login);

    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 3; page++) {
      const data: ConversationsQuery['conversations'] = (await gqlOk(timed, ConversationsDocument, { first: 2, after }, me.token))
        .conversations;
      seen.push(...data.edges.map((e) => e.node.partner.login));
      expect(data.pageInfo.hasNextPage).toBe(page < 2);
      after = data.pageInfo.endCursor ?? null;
    }
    expect(seen).toEqual(expected);
    const all = (await gqlOk(timed, ConversationsDocument, {}, me.token)).conversations.edges.map((e) => e.node);
    expect(all.map((c) => c.unreadCount)).toEqual([1, 1, 1, 1, 1]);
    expect(all[0]!.lastMessage).toMatchObject({ content: 'bump', from: { login: me.login } });
  });

  it('gives a conversation without messages as empty, not as an error', async () => {
    const [a, b] = [await signUp(app), await signUp(app)];
    const data = await gqlOk(app, ConversationMessagesDocument, { with: b.login, first: 10 }, a.token);
    expect(data.conversation!.messages).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    const conv = (await gqlOk(app, ConversationDocument, { with: b.login }, a.token)).conversation;
    expect(conv).toMatchObject({ lastMessage: null, lastMessageAt: null, unreadCount: 0, readUpTo: null });
  });
});

describe('errors', () => {
  it('NOT_FOUND for a missing recipient or partner, and nothing is written', async () => {
    const a = await signUp(app);
    for (const to of [uniqueLogin('ghost'), '', 'x'.repeat(500), 'a:b']) {
      expect(codes(await gql(app, SendDirectMessageDocument, { to, content: 'hi' }, a.token))).toEqual(['NOT_FOUND']);
      expect(codes(await gql(app, ConversationDocument, { with: to }, a.token))).toEqual(['NOT_FOUND']);
      expect(codes(await gql(app, MarkConversationReadDocument, { with: to }, a.token))).toEqual(['NOT_FOUND']);
    }
    expect((await gqlOk(app, ConversationsDocument, {}, a.token)).conversations.edges).toEqual([]);
  });

  it('BAD_USER_INPUT names the field: self-send, empty or too long content, bad page arguments', async () => {
    const [a, b] = [await signUp(app), await signUp(app)];
    const cases: Array<[string, Promise<{ errors?: readonly unknown[] }>]> = [
      ['to', gql(app, SendDirectMessageDocument, { to: a.login.toUpperCase(), content: 'hi' }, a.token)],
      ['content', gql(app, SendDirectMessageDocument, { to: b.login, content: ' \n\t ' }, a.token)],
      ['content', gql(app, SendDirectMessageDocument, { to: b.login, content: 'x'.repeat(4001) }, a.token)],
      ['with', gql(app, ConversationDocument, { with: a.login }, a.token)],
      ['with', gql(app, MarkConversationReadDocument, { with: a.login }, a.token)],
      ['first', gql(app, ConversationsDocument, { first: 501 }, a.token)],
      ['first', gql(app, ConversationsDocument, { first: 0 }, a.token)],
      ['after', gql(app, ConversationsDocument, { after: 'garbage' }, a.token)],
      ['first', gql(app, ConversationMessagesDocument, { with: b.login, first: 201 }, a.token)],
      ['after', gql(app, ConversationMessagesDocument, { with: b.login, after: 'garbage' }, a.token)],
    ];
    for (const [field, pending] of cases) {
      const res = (await pending) as Awaited<ReturnType<typeof gql>>;
      expect(codes(res), field).toEqual(['BAD_USER_INPUT']);
      expect(res.errors?.[0]?.extensions?.field).toBe(field);
    }
    // 4000 characters (counted as code points, after trimming) are fine.
    const longest = '🙂'.repeat(4000);
    expect((await send(app, a, b, `  ${longest}  `)).content).toBe(longest);
    const history = await wholeHistory(app, b, a);
    expect(history.messages.map((m) => m.content)).toEqual([longest]);
  });

  it('UNAUTHENTICATED without a session', async () => {
    const b = await signUp(app);
    expect(codes(await gql(app, SendDirectMessageDocument, { to: b.login, content: 'hi' }))).toEqual(['UNAUTHENTICATED']);
    expect(codes(await gql(app, ConversationsDocument, {}))).toEqual(['UNAUTHENTICATED']);
    expect(codes(await gql(app, ConversationDocument, { with: b.login }))).toEqual(['UNAUTHENTICATED']);
    expect(codes(await gql(app, MarkConversationReadDocument, { with: b.login }))).toEqual(['UNAUTHENTICATED']);
  });
});

describe('history', () => {
  it('pages newest first across at least 3 month buckets: every message once, in order', async () => {
    const clock = new ManualClock(new Date('2025-11-20T08:00:00Z'));
    const timed = await startApp({ clock });
    const [a, b] = [await signUp(timed), await signUp(timed)];
    // Nov 2025: 7, Dec 2025: 5, Jan 2026: none, Feb 2026: 6 (one on the last instant of the month).
    const plan: Array<[string, number]> = [
      ['2025-11-20T08:00:00Z', 7],
      ['2025-12-31T23:59:50Z', 5],
      ['2026-02-28T23:59:54Z', 6],
    ];
    const sent: string[] = [];
    for (const [start, count] of plan) {
      clock.set(start);
      for (let i = 0; i < count; i++) {
        const from = i % 2 === 0 ? a : b;
        const m = await send(timed, from, from === a ? b : a, `${start.slice(0, 7)} #${i}`);
        sent.push(m.id);
        clock.advance(1000);
      }
    }
    expect(sent.map(ticksOf)).toEqual([...sent.map(ticksOf)].sort((x, y) => (x < y ? -1 : 1)));
    const newestFirst = [...sent].reverse();

    for (const pageSize of [1, 4, 5, 7, 50]) {
      for (const [viewer, partner] of [
        [a, b],
        [b, a],
      ] as const) {
        const { messages, pages } = await wholeHistory(timed, viewer, partner, pageSize);
        expect(messages.map((m) => m.id)).toEqual(newestFirst);
        expect(pages).toBe(Math.max(1, Math.ceil(sent.length / pageSize)));
      }
    }
    const months = new Set((await wholeHistory(timed, a, b)).messages.map((m) => m.createdAt.slice(0, 7)));
    expect([...months]).toEqual(['2026-02', '2025-12', '2025-11']);
  });

  it('keeps a cursor to its conversation', async () => {
    const [a, b, c] = [await signUp(app), await signUp(app), await signUp(app)];
    await send(app, a, b, 'one');
    await send(app, a, b, 'two');
    await send(app, a, c, 'three');
    const page = await gqlOk(app, ConversationMessagesDocument, { with: b.login, first: 1 }, a.token);
    const cursor = page.conversation!.messages.pageInfo.endCursor!;
    // A's own other conversation: the cursor is simply wrong there.
    const other = await gql(app, ConversationMessagesDocument, { with: c.login, first: 1, after: cursor }, a.token);
    expect(codes(other)).toEqual(['BAD_USER_INPUT']);
    expect(other.errors?.[0]?.extensions?.field).toBe('after');
  });

  it('refuses a cursor whose month bucket is not a real month, naming the argument', async () => {
    const [a, b] = [await signUp(app), await signUp(app)];
    await send(app, a, b, 'one');
    await send(app, a, b, 'two');
    const page = await gqlOk(app, ConversationMessagesDocument, { with: b.login, first: 1 }, a.token);
    const cursor = page.conversation!.messages.pageInfo.endCursor!;
    // The cursor as served works: the refusals below are about the month alone.
    const next = await gqlOk(app, ConversationMessagesDocument, { with: b.login, first: 1, after: cursor }, a.token);
    expect(next.conversation!.messages.edges.map((e) => e.node.content)).toEqual(['one']);
    const position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    const monthKey = Object.keys(position).find((k) => position[k] === Number(page.conversation!.messages.edges[0]!.node.createdAt.slice(0, 7).replace('-', '')));
    expect(monthKey).toBeDefined();
    for (const bogus of [1e300, 202613, 20260101, 2026.5]) {
      const forged = Buffer.from(JSON.stringify({ ...position, [monthKey!]: bogus })).toString('base64url');
      const res = await gql(app, ConversationMessagesDocument, { with: b.login, first: 1, after: forged }, a.token);
      expect(codes(res), String(bogus)).toEqual(['BAD_USER_INPUT']);
      expect(res.errors?.[0]?.extensions?.field).toBe('after');
    }
  });
});

describe('markConversationRead and read receipts', () => {
  it('reads up to the newest unread message and shows the partner the receipt', async () => {
    const clock = new ManualClock(new Date('2026-04-10T12:00:00Z'));
    const timed = await startApp({ clock });
    const [a, b] = [await signUp(timed), await signUp(timed)];
    const sent = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      sent.push(await send(timed, a, b, `m${i}`));
    }
    const before = (await gqlOk(timed, ConversationDocument, { with: a.login }, b.token)).conversation!;
    expect(before).toMatchObject({ unreadCount: 3, firstUnreadAt: sent[0]!.createdAt, readUpTo: null, readAt: null });

    clock.advance(5000);
    const read = (await gqlOk(timed, MarkConversationReadDocument, { with: a.login }, b.token)).markConversationRead;
    const readAt = clock.now().toISOString();
    expect(read).toMatchObject({ unreadCount: 0, firstUnreadAt: null, readUpTo: sent[2]!.id, readAt });

    const aView = (await gqlOk(timed, ConversationDocument, { with: b.login }, a.token)).conversation!;
    expect(aView).toMatchObject({ partnerReadUpTo: sent[2]!.id, partnerReadAt: readAt, readUpTo: null, unreadCount: 0 });

    // Reading again with nothing unread changes nothing.
    clock.advance(5000);
    const again = (await gqlOk(timed, MarkConversationReadDocument, { with: a.login }, b.token)).markConversationRead;
    expect(again).toMatchObject({ unreadCount: 0, readUpTo: sent[2]!.id, readAt });

    // A newer message is unread again; the read point stays until the next read.
    clock.advance(1000);
    const next = await send(timed, a, b, 'one more');
    const after = (await gqlOk(timed, ConversationDocument, { with: a.login }, b.token)).conversation!;
    expect(after).toMatchObject({ unreadCount: 1, firstUnreadAt: next.createdAt, readUpTo: sent[2]!.id });
    const second = (await gqlOk(timed, MarkConversationReadDocument, { with: a.login }, b.token)).markConversationRead;
    expect(second).toMatchObject({ unreadCount: 0, readUpTo: next.id });
    expect((await gqlOk(timed, ConversationDocument, { with: b.login }, a.token)).conversation).toMatchObject({
      partnerReadUpTo: next.id,
    });
  });

  it("only touches the reader's unread messages from that partner", async () => {
    const [a, b, c] = [await signUp(app), await signUp(app), await signUp(app)];
    await send(app, a, b, 'a to b');
    await send(app, c, b, 'c to b');
    await send(app, b, a, 'b to a');
    await gqlOk(app, MarkConversationReadDocument, { with: a.login }, b.token);
    const inbox = (await gqlOk(app, ConversationsDocument, {}, b.token)).conversations.edges.map((e) => e.node);
    expect(Object.fromEntries(inbox.map((c) => [c.partner.login, c.unreadCount]))).toEqual({ [a.login]: 0, [c.login]: 1 });
    // B reading did not read B's own message for A.
    expect((await gqlOk(app, ConversationDocument, { with: b.login }, a.token)).conversation?.unreadCount).toBe(1);
  });

  it('counts the unread ids a send kept in the inbox row before cql/015, and a read clears them with the rest', async () => {
    const clock = new ManualClock(new Date('2026-05-10T12:00:00Z'));
    const timed = await startApp({ clock });
    const [a, b] = [await signUp(timed), await signUp(timed)];
    const { db } = timed.services;
    // What a send stored before cql/015: its unread id in B's inbox row's set, at the message's time.
    const toLegacySet = async (id: string) => {
      const uuid = TimeUuid.fromString(timeUuidOf(id));
      await db.execute(cql('DELETE FROM inbox_unread WHERE owner = ? AND partner = ? AND id = ?', { idempotent: true }), [b.login, a.login, uuid]);
      await db.execute(cql('UPDATE inbox USING TIMESTAMP ? SET unread = unread + ? WHERE owner = ? AND partner = ?', { idempotent: true }), [
        timeMicros(uuid),
        [uuid],
        b.login,
        a.login,
      ]);
    };
    const sent = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      sent.push(await send(timed, a, b, `m${i}`));
    }
    // The oldest and the newest unread ids are in the old set, the middle one is a row.
    await toLegacySet(sent[0]!.id);
    await toLegacySet(sent[2]!.id);

    const before = (await gqlOk(timed, ConversationDocument, { with: a.login }, b.token)).conversation!;
    expect(before).toMatchObject({ unreadCount: 3, firstUnreadAt: sent[0]!.createdAt });
    const listed = (await gqlOk(timed, ConversationsDocument, {}, b.token)).conversations.edges.map((e) => e.node);
    expect(listed.map((c) => [c.partner.login, c.unreadCount])).toEqual([[a.login, 3]]);

    // The read point is the newest of both: everything is read, nothing comes back.
    const read = (await gqlOk(timed, MarkConversationReadDocument, { with: a.login }, b.token)).markConversationRead;
    expect(read).toMatchObject({ unreadCount: 0, firstUnreadAt: null, readUpTo: sent[2]!.id });
    clock.advance(1000);
    const next = await send(timed, a, b, 'after the upgrade');
    expect((await gqlOk(timed, ConversationDocument, { with: a.login }, b.token)).conversation).toMatchObject({
      unreadCount: 1,
      firstUnreadAt: next.createdAt,
    });
  });
});
