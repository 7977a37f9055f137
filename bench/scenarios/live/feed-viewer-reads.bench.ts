/**
 * `npm run bench feed-viewer-reads`: what a room feed whose document selects
 * the fields that read the viewer (seenBy, Poll.myAnswers, forwardedFrom)
 * costs in CQL per event, at 1, 50 and 200 subscribers (each a different
 * viewer, all participants), side by side: one room per level, every
 * subscription open at once, and each round sends the same three events to
 * every room in turn (a forward, a poll, a vote on it). The statements counted
 * are the reads of the tables behind those fields; a room whose one
 * subscriber selects none of them gives what the mutations and the delivery
 * read themselves, so the rest is the fields'. Delivery time (the mutation
 * sent until every subscriber has the event) is a side figure: the
 * subscribers' sockets are in this process too.
 */
import { parse } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { App } from '../../../src/app.js';
import type { Statement } from '../../../src/db/cassandra/client.js';
import { ForwardMessageDocument, JoinRoomDocument, PostPollDocument, VotePollDocument } from '../../../test/generated/graphql.js';
import { gqlOk } from '../../../test/testkit/http.js';
import { eventually } from '../../../test/testkit/poll.js';
import { roomChannel } from '../../../src/resolvers/rooms/live/feed.js';
import { followRoom, post, roomWith } from '../../../test/testkit/data/rooms.js';
import { signUp, signUpMany, type TestUser } from '../../../test/testkit/data/users.js';
import { wsClient, type Subscription, type WsClient } from '../../../test/testkit/ws.js';
import { benchApp, median } from '../../kit/harness.js';

/** Subscribers per room; 0 stands for the room whose one subscriber selects none of the fields. */
const LEVELS = [0, 1, 50, 200];
const ROUNDS = 5;
const EVENTS = ['forward', 'poll', 'vote'] as const;
type EventKind = (typeof EVENTS)[number];

interface FeedMessage {
  id: string;
  poll: { voterCount: number; myAnswers: number[] } | null;
  forwardedFrom: { id: string } | null;
}
type FeedEvent = { roomEvents: { __typename: string; message?: FeedMessage } };

const FEED = parse(`
  subscription FeedViewerReads($roomName: String!) {
    roomEvents(roomName: $roomName) {
      __typename
      ... on MessagePosted { message { ...ViewerFields } }
      ... on PollUpdated { message { ...ViewerFields } }
    }
  }
  fragment ViewerFields on Message {
    id
    seenBy(first: 3) { count edges { node { login } } }
    poll { voterCount answers { votes } myAnswers }
    forwardedFrom { id content }
  }
`) as TypedDocumentNode<FeedEvent, { roomName: string }>;

/** The same events without the fields that read the viewer. */
const PLAIN_FEED = parse(`
  subscription FeedWithoutViewerFields($roomName: String!) {
    roomEvents(roomName: $roomName) {
      __typename
      ... on MessagePosted { message { id } }
      ... on PollUpdated { message { id } }
    }
  }
`) as TypedDocumentNode<FeedEvent, { roomName: string }>;

/**
 * The reads behind the viewer's fields: a poll's votes, a room's readers, messages (the forwarded original), and
 * rooms through the loaders (seenBy's, the original's). A feed's re-check of access reads its room by
 * `room_name = ?`, once per room and window whatever the number of subscribers, when the clock says: left out.
 */
const TABLES = /^\s*SELECT\b[\s\S]*\bFROM (poll_votes\b|room_readers\b|chat_room_messages\b|chat_rooms WHERE room_name IN\b)/;

/** Counts the reads of TABLES the instance sends while switched on. */
function readCounter(app: App) {
  const db = app.services.db;
  const execute = db.execute;
  let on = false;
  let reads = 0;
  db.execute = function (stmt: Statement, ...rest) {
    if (on && TABLES.test(stmt.cql)) reads += 1;
    return execute.call(this, stmt, ...rest);
  };
  return {
    async during(run: () => Promise<void>): Promise<number> {
      reads = 0;
      on = true;
      try {
        await run();
      } finally {
        on = false;
      }
      return reads;
    },
  };
}

interface Level {
  subscribers: number;
  room: string;
  feeds: Array<{ viewer: TestUser; feed: Subscription<FeedEvent> }>;
}

async function joinAll(app: App, roomName: string, members: TestUser[]): Promise<void> {
  for (let i = 0; i < members.length; i += 8) {
    await Promise.all(members.slice(i, i + 8).map((m) => gqlOk(app, JoinRoomDocument, { roomName }, m.token)));
  }
}

/** Every feed's next event, failing on an error or on a message `check` refuses (the plain feed: on its id only). */
async function allReceive(level: Level, id: () => string, check: (message: FeedMessage, viewer: TestUser) => boolean): Promise<void> {
  await Promise.all(
    level.feeds.map(async ({ viewer, feed }) => {
      const result = await feed.next(30_000);
      const message = result.data?.roomEvents.message;
      const expected = message && message.id === id() && (level.subscribers === 0 || check(message, viewer));
      if (result.errors?.length || !expected) throw new Error(`unexpected event for ${viewer.login}: ${JSON.stringify(result)}`);
    }),
  );
}

export default async function run(): Promise<string> {
  const app = await benchApp();
  const clients: WsClient[] = [];
  const levels: Level[] = [];
  try {
    const creator = await signUp(app);
    const viewers = await signUpMany(app, Math.max(...LEVELS), 'feedview');
    const source = await roomWith(app, creator, viewers.slice(0, 1));
    const feedersOf = (level: number) => viewers.slice(0, Math.max(level, 1));
    for (const subscribers of LEVELS) {
      const room = await roomWith(app, creator);
      await joinAll(app, room, feedersOf(subscribers));
      levels.push({ subscribers, room, feeds: [] });
    }
    for (const level of levels) {
      for (const viewer of feedersOf(level.subscribers)) {
        const client = wsClient(app, viewer.token);
        clients.push(client);
        level.feeds.push({ viewer, feed: await followRoom(app, client, level.room, level.subscribers === 0 ? PLAIN_FEED : FEED) });
      }
      const warm = await post(app, creator, level.room, 'warm');
      await allReceive(level, () => warm.id, () => true);
    }
    const counter = readCounter(app);
    const reads = new Map(LEVELS.map((n) => [n, new Map(EVENTS.map((e) => [e, [] as number[]]))]));
    const ms = new Map(LEVELS.map((n) => [n, new Map(EVENTS.map((e) => [e, [] as number[]]))]));
    const measure = async (level: Level, kind: EventKind, trigger: () => Promise<string>, check: (m: FeedMessage, v: TestUser) => boolean) => {
      let took = 0;
      const count = await counter.during(async () => {
        const t0 = performance.now();
        const id = await trigger();
        await allReceive(level, () => id, check);
        took = performance.now() - t0;
      });
      reads.get(level.subscribers)!.get(kind)!.push(count);
      ms.get(level.subscribers)!.get(kind)!.push(took);
    };
    // The first viewer takes part in the room forwarded from, and votes.
    const voter = viewers[0]!;
    for (let round = 0; round < ROUNDS; round++) {
      const original = await post(app, creator, source, `original ${round}`);
      // Contenders alternate: each level's events in turn, the order rotating each round.
      for (let i = 0; i < levels.length; i++) {
        const level = levels[(i + round) % levels.length]!;
        await measure(
          level,
          'forward',
          async () => {
            const copy = (await gqlOk(app, ForwardMessageDocument, { messageId: original.id, toRoom: level.room }, creator.token)).forwardMessage;
            return (copy as { id: string }).id;
          },
          (m, v) => (m.forwardedFrom?.id === original.id) === (v.login === voter.login),
        );
        let pollId = '';
        const input = { roomName: level.room, question: `Round ${round}?`, answers: ['Yes', 'No'] };
        await measure(level, 'poll', async () => (pollId = (await gqlOk(app, PostPollDocument, { input }, creator.token)).postPoll.id), (m) => m.poll?.voterCount === 0);
        await measure(
          level,
          'vote',
          async () => (await gqlOk(app, VotePollDocument, { messageId: pollId, answers: [1] }, voter.token), pollId),
          (m, v) => m.poll?.voterCount === 1 && JSON.stringify(m.poll.myAnswers) === (v.login === voter.login ? '[1]' : '[]'),
        );
      }
    }
    return report(reads, ms);
  } finally {
    await Promise.all(clients.map((c) => Promise.resolve(c.dispose()).catch(() => undefined)));
    // Each feed's end records when its subscriber was last seen: let every one be written before the app stops.
    const logins = [...new Set(levels.flatMap((l) => l.feeds.map((f) => f.viewer.login)))];
    const ended = async () =>
      levels.every((l) => app.services.pubsub.listeners(roomChannel(l.room)) === 0) &&
      (await app.services.stores.users.byLogins(logins)).every((u) => u.lastSeenAt !== null);
    await eventually(ended, { timeoutMs: 30_000, what: 'every feed ended' }).catch(() => undefined);
    await app.stop();
  }
}

function report(reads: Map<number, Map<EventKind, number[]>>, ms: Map<number, Map<EventKind, number[]>>): string {
  // Per round, the fields' reads: the level's less the plain feed's in the same round.
  const fieldsReads = (n: number, e: EventKind) => reads.get(n)!.get(e)!.map((r, round) => r - reads.get(0)!.get(e)![round]!);
  const row = (n: number) => {
    const cells = EVENTS.map((e) => {
      const fields = fieldsReads(n, e);
      return `${median(reads.get(n)!.get(e)!)} | ${n === 0 ? '–' : `${median(fields)} (${Math.min(...fields)}–${Math.max(...fields)})`}`;
    });
    const times = EVENTS.map((e) => median(ms.get(n)!.get(e)!).toFixed(1));
    return `| ${n === 0 ? '1, selecting none of them' : n} | ${cells.join(' | ')} | ${times.join(' | ')} |`;
  };
  const top = LEVELS.at(-1)!;
  const eventMs = (n: number) => median(EVENTS.map((e) => median(ms.get(n)!.get(e)!)));
  return [
    `One app in-process on the local node, a room per level, every subscription open at once over graphql-ws (${LEVELS.slice(1).join(', ')}`,
    'subscribers, each a different viewer and a participant), each feed selecting seenBy(first: 3), poll { voterCount answers',
    'myAnswers } and forwardedFrom on MessagePosted and PollUpdated; beside them a room whose one subscriber selects only the',
    `message's id. ${ROUNDS} rounds; each sends every room in turn (the order rotating) a forward of a message that only one subscriber`,
    'may read, a poll, and a vote on it. Reads counted from the mutation sent until every subscriber had the event: SELECTs of',
    'poll_votes, room_readers, chat_room_messages, and chat_rooms through the loaders (`room_name IN ?`; the feeds\' access',
    're-checks, once per room and window, are left out). "Fields\' reads" is that count less the plain feed\'s in the same round:',
    "what the fields cost per event, median (least–most over the rounds). Every subscriber's forwardedFrom (the original for the",
    "one who may read it, null for the others) and myAnswers (the voter's own, empty for the others) were checked. Times: median",
    'ms from the mutation sent until every subscriber had the event (the sockets are in the same process; a vote\'s PollUpdated',
    'waits out its coalescing window, 250 ms, first).',
    '',
    '| subscribers | reads per forward | fields\' reads | reads per poll | fields\' reads | reads per vote | fields\' reads | ms per forward | ms per poll | ms per vote |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...LEVELS.map(row),
    '',
    `Time until every subscriber had the event, ${top} subscribers against 1: ${(eventMs(top) / eventMs(1)).toFixed(2)} (the median of the three events' medians, measured side by side in this run).`,
  ].join('\n');
}
