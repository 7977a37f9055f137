/**
 * Who has seen a room message (Message.seenBy) from the participants' read
 * markers, and RoomReadUpdated telling the room's subscribers on every
 * instance whose markers moved.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { HistoryDocument, HistorySeenByDocument, MarkRoomReadDocument, MarkRoomUnreadDocument, ReadUpdatesDocument, SeenByDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { cqlRow } from '../testkit/cql.js';
import { roomFeed } from '../testkit/feeds.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { signUp, signUpMany, type TestUser } from '../testkit/data/users.js';

let a: App;
let b: App;
let author: TestUser;
let readers: TestUser[];
let outsider: TestUser;

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  const users = await signUpMany(a, 6, 'seen');
  [author, outsider] = [users[0]!, users[1]!];
  readers = users.slice(2).sort((x, y) => x.login.localeCompare(y.login));
});

const markRead = (app: App, user: TestUser, roomName: string, upTo: string) => gqlOk(app, MarkRoomReadDocument, { roomName, upTo }, user.token);
const seenBy = async (user: TestUser, messageId: string, first?: number, after?: string) =>
  (await gqlOk(a, SeenByDocument, { messageId, first, after }, user.token)).message!.seenBy;

describe('Message.seenBy', () => {
  it('lists the participants whose marker is at or past the message, its author aside, page by page with a count', async () => {
    const room = await roomWith(a, author, readers);
    const first = await post(a, author, room, 'first');
    const second = await post(a, author, room, 'second');
    const [r0, r1, r2, r3] = readers as [TestUser, TestUser, TestUser, TestUser];
    await markRead(a, r0, room, first.id);
    await markRead(b, r1, room, second.id);
    await markRead(a, r2, room, second.id);
    // r3 read nothing past the join; the author's own marker does not count.
    await markRead(a, author, room, second.id);

    const onFirst = await seenBy(r3, first.id);
    expect(onFirst.count).toBe(3);
    expect(onFirst.edges.map((e) => e.node.login)).toEqual([r0.login, r1.login, r2.login]);
    const onSecond = await seenBy(author, second.id);
    expect(onSecond).toMatchObject({ count: 2, pageInfo: { hasNextPage: false } });
    expect(onSecond.edges.map((e) => e.node.login)).toEqual([r1.login, r2.login]);

    // Paged: one at a time, every reader once, in login order.
    const paged: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await seenBy(r0, first.id, 1, after);
      expect(page.count).toBe(3);
      paged.push(...page.edges.map((e) => e.node.login));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor!;
    }
    expect(paged).toEqual([r0.login, r1.login, r2.login]);

    // A marker moved back (markRoomUnread) takes its reader off the message.
    await gqlOk(b, MarkRoomUnreadDocument, { roomName: room, from: second.id }, r1.token);
    expect((await seenBy(r0, second.id)).edges.map((e) => e.node.login)).toEqual([r2.login]);
  });

  it('drops a reader who marks everything unread, and pages logins whose order differs by code point and by locale', async () => {
    // '-' sorts before '_' by localeCompare and after it by code point: the pages must follow one order.
    const stem = `sb${Date.now().toString(36)}`;
    const [dash, under] = await Promise.all([signUp(a, { login: `${stem}-1` }), signUp(a, { login: `${stem}_1` })]);
    const room = await roomWith(a, author, [dash, under]);
    const message = await post(a, author, room, 'page me');
    await Promise.all([dash, under].map((r) => markRead(a, r, room, message.id)));
    const paged: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 5; pages++) {
      const page = await seenBy(author, message.id, 1, after);
      paged.push(...page.edges.map((e) => e.node.login));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor!;
    }
    expect(paged.sort()).toEqual([dash.login, under.login].sort());

    // Unread from the room's very first message: no marker is left in the room, and seenBy drops the reader.
    const oldest = (await gqlOk(a, HistoryDocument, { roomName: room, last: 1 }, dash.token)).room!.messages.edges[0]!.node.id;
    await gqlOk(b, MarkRoomUnreadDocument, { roomName: room, from: oldest }, dash.token);
    expect((await seenBy(author, message.id)).edges.map((e) => e.node.login)).toEqual([under.login]);
  });

  it('is for participants and the author only', async () => {
    const room = await roomWith(a, author, readers.slice(0, 1));
    const message = await post(a, author, room, 'private');
    const refused = await gql(a, SeenByDocument, { messageId: message.id }, outsider.token);
    expect(codes(refused)).toEqual(['FORBIDDEN']);
    expect(codes(await gql(a, SeenByDocument, { messageId: message.id, after: 'not a cursor' }, author.token))).toEqual(['BAD_USER_INPUT']);
  });

  it('costs one read of the room\'s markers for a whole page of messages, whatever the number of participants', async () => {
    const queriesFor = async (members: TestUser[]) => {
      const room = await roomWith(a, author, members);
      for (let i = 0; i < 20; i++) await post(a, author, room, `m${i}`);
      for (const m of members) await markRead(a, m, room, (await post(a, author, room, `by ${m.login}`)).id);
      await gqlOk(a, HistorySeenByDocument, { roomName: room }, author.token);
      const before = a.services.db.queryCount;
      const page = (await gqlOk(a, HistorySeenByDocument, { roomName: room }, author.token)).room!.messages.edges;
      expect(page.some((e) => e.node.seenBy.count > 0)).toBe(true);
      return a.services.db.queryCount - before;
    };
    const few = await queriesFor(readers.slice(0, 1));
    const more = await queriesFor(readers);
    expect(more).toBe(few);
  });

  it('ends as the marker is when one reader marks from two instances at once', async () => {
    const room = await roomWith(a, author, readers.slice(0, 1));
    const reader = readers[0]!;
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await post(a, author, room, `race ${i}`)).id);
    await Promise.all(ids.map((id, i) => markRead(i % 2 ? a : b, reader, room, id)));
    const marker = await cqlRow(a, 'SELECT read_up_to FROM room_read_markers WHERE login = ? AND room_name = ?', [reader.login, room]);
    const copy = await cqlRow(a, 'SELECT read_up_to FROM room_readers WHERE room_name = ? AND login = ?', [room, reader.login]);
    expect(copy?.read_up_to.toString()).toBe(marker?.read_up_to.toString());
    // The marker moved forward only: the newest message is seen, by the copy's account too.
    expect((await seenBy(author, ids.at(-1)!)).edges.map((e) => e.node.login)).toEqual([reader.login]);
  });
});

describe('RoomReadUpdated', () => {
  it('reaches subscribers on another instance, coalesced, naming who moved, in order', async () => {
    const room = await roomWith(a, author, readers);
    const message = await post(a, author, room, 'read me');
    const feed = await roomFeed(b, author.token, ReadUpdatesDocument, { roomName: room });
    /** The readers the next RoomReadUpdated names (the feed's other events, such as the posts, pass by). */
    const nextReaders = async (): Promise<string[]> => {
      for (;;) {
        const { roomEvents: event } = await feed.data(10_000);
        if (event.__typename !== 'RoomReadUpdated') continue;
        expect(event.roomName).toBe(room);
        return event.readers.map((u) => u.login);
      }
    };
    // Three readers at once: events (one per window at most) that name each of them once.
    const burst = readers.slice(0, 3).map((r) => r.login);
    await Promise.all(readers.slice(0, 3).map((r) => markRead(a, r, room, message.id)));
    const named: string[] = [];
    let events = 0;
    while (named.length < burst.length) {
      named.push(...(await nextReaders()));
      events += 1;
    }
    expect(named.sort()).toEqual(burst.sort());
    expect(events).toBeLessThanOrEqual(burst.length);

    // Marking again where a marker already is moves nothing and publishes nothing: the next event is the next move's.
    await markRead(a, readers[0]!, room, message.id);
    const later = await post(a, author, room, 'later');
    await markRead(a, readers[3]!, room, later.id);
    expect(await nextReaders()).toEqual([readers[3]!.login]);
  });
});
