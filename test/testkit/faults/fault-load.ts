/**
 * A steady mixed load for fault tests, every request timed: posts, rooms created and joined, direct messages,
 * purchases with and without an idempotency key, reactions, logins and history reads, each loop one request at a
 * time over two instances. A fault test asks how many requests of each kind were started and answered inside its
 * fault window (so a loop blocked through the window shows 0), and then checks every acknowledged write exactly.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { App } from '../../../src/app.js';
import {
  AddReactionDocument,
  BuyItemDocument,
  ConversationMessagesDocument,
  CreateRoomDocument,
  HistoryDocument,
  InboxSummaryDocument,
  ItemDocument,
  JoinRoomDocument,
  LoginDocument,
  MessageReactionsDocument,
  MyPurchasesDocument,
  PostMessageDocument,
  RoomDocument,
  SendDirectMessageDocument,
} from '../../generated/graphql.js';
import { gql, gqlOk, type GqlResult } from '../http.js';
import type { TestUser } from '../data/users.js';
import { uniqueRoomName } from '../data/rooms.js';

export const LOAD_KINDS = ['post', 'createRoom', 'join', 'sendDirectMessage', 'buyItem', 'buyItemWithKey', 'addReaction', 'login', 'history'] as const;
export type LoadKind = (typeof LOAD_KINDS)[number];

interface Timed {
  kind: LoadKind;
  startedAt: number;
  answeredAt: number;
  /** Why it failed: an error code and message, an unexpected answer, or the transport's error. */
  failure?: string;
}

/** What the load was told was done: each must be found in storage exactly once. */
export interface Acknowledged {
  posts: Array<{ id: string; content: string }>;
  rooms: string[];
  joins: string[];
  directMessages: Array<{ id: string; content: string }>;
  /** Per message id, the emojis the reacting user was told it added. */
  reactions: Map<string, Set<string>>;
  /** Purchase ids, with whether a retry under the same key answered the same purchase. */
  purchases: Array<{ id: string; keyed: boolean }>;
}

export interface FaultLoad {
  room: string;
  itemId: string;
  offeredUnits: number;
  acknowledged: Acknowledged;
  records: Timed[];
  stop(): Promise<void>;
}

/** The people a load needs: the poster, a room creator and a joiner, a DM sender and recipient, a buyer, a reactor. */
export interface LoadCast {
  poster: TestUser;
  creator: TestUser;
  joiner: TestUser;
  sender: TestUser;
  recipient: TestUser;
  buyer: TestUser;
  reactor: TestUser;
}

type Answer = GqlResult<unknown>;

/** Each loop sends at most one request per PACE_MS. */
const PACE_MS = 100;
const firstError = (res: Answer) => (res.errors?.length ? `${res.errors[0]!.extensions?.code} ${res.errors[0]!.message}` : undefined);

/**
 * Starts the load on `instances` (requests alternate between them) against `room` (the poster and reactor are
 * members) and an item on sale with `offeredUnits`; it runs until stopped.
 */
export function startFaultLoad(instances: App[], cast: LoadCast, room: string, itemId: string, offeredUnits: number): FaultLoad {
  const records: Timed[] = [];
  const acknowledged: Acknowledged = { posts: [], rooms: [], joins: [], directMessages: [], reactions: new Map(), purchases: [] };
  const run = `${Date.now().toString(36)}`;
  let stopping = false;
  const on = (i: number) => instances[i % instances.length]!;

  /** Runs one request, records when it started and was answered, and how it failed; the answer when it did not. */
  async function timed<T>(kind: LoadKind, send: () => Promise<GqlResult<T>>, check?: (res: GqlResult<T>) => string | undefined) {
    const startedAt = Date.now();
    let failure: string | undefined;
    let res: GqlResult<T> | undefined;
    try {
      res = await send();
      failure = firstError(res) ?? (res.status !== 200 ? `HTTP ${res.status}` : check?.(res));
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      failure = `no answer: ${cause?.code ?? ''} ${cause?.message ?? (err as Error).message}`;
    }
    const answeredAt = Date.now();
    records.push({ kind, startedAt, answeredAt, failure });
    // Paced, so the load leaves the machine room for the nodes it faults (a node starting again is CPU bound).
    if (answeredAt - startedAt < PACE_MS) await new Promise((resolve) => setTimeout(resolve, PACE_MS - (answeredAt - startedAt)));
    return failure ? undefined : res!.data!;
  }

  const loops: Array<() => Promise<void>> = [
    async () => {
      for (let i = 0; !stopping; i++) {
        const content = `load ${run} ${i}`;
        const data = await timed('post', () => gql(on(i), PostMessageDocument, { roomName: room, content }, cast.poster.token));
        if (data) acknowledged.posts.push({ id: data.postMessage.id, content });
      }
    },
    async () => {
      for (let i = 0; !stopping; i++) {
        const name = uniqueRoomName('fault');
        if (!(await timed('createRoom', () => gql(on(i), CreateRoomDocument, { input: { name } }, cast.creator.token)))) continue;
        acknowledged.rooms.push(name);
        if (await timed('join', () => gql(on(i + 1), JoinRoomDocument, { roomName: name }, cast.joiner.token))) acknowledged.joins.push(name);
      }
    },
    async () => {
      for (let i = 0; !stopping; i++) {
        const content = `dm ${run} ${i}`;
        const data = await timed('sendDirectMessage', () => gql(on(i), SendDirectMessageDocument, { to: cast.recipient.login, content }, cast.sender.token));
        if (data) acknowledged.directMessages.push({ id: data.sendDirectMessage.id, content });
      }
    },
    async () => {
      for (let i = 0; !stopping; i++) {
        const data = await timed('buyItem', () => gql(on(i), BuyItemDocument, { itemId, quantity: 1 }, cast.buyer.token), completed);
        if (data) acknowledged.purchases.push({ id: data.buyItem.id, keyed: false });
      }
    },
    async () => {
      // Each purchase under a key of its own, sent twice: the retry must answer the same purchase.
      for (let i = 0; !stopping; i++) {
        const headers = { 'idempotency-key': `fault-${randomUUID()}` };
        const buy = (n: number) => gql(on(i + n), BuyItemDocument, { itemId, quantity: 1 }, cast.buyer.token, headers);
        const first = await timed('buyItemWithKey', () => buy(0), completed);
        if (!first) continue;
        const again = await timed('buyItemWithKey', () => buy(1), (res) => (res.data?.buyItem.id === first.buyItem.id ? undefined : `the retry answered ${res.data?.buyItem.id}, not ${first.buyItem.id}`));
        if (again) acknowledged.purchases.push({ id: first.buyItem.id, keyed: true });
      }
    },
    async () => {
      for (let i = 0; !stopping; i++) {
        const target = acknowledged.posts.at(-1);
        if (!target) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          continue;
        }
        const emoji = i % 2 ? '👍' : '🎉';
        const data = await timed('addReaction', () => gql(on(i), AddReactionDocument, { messageId: target.id, emoji }, cast.reactor.token));
        if (data) (acknowledged.reactions.get(target.id) ?? acknowledged.reactions.set(target.id, new Set()).get(target.id)!).add(emoji);
      }
    },
    async () => {
      for (let i = 0; !stopping; i++) await timed('login', () => gql(on(i), LoginDocument, { login: cast.reactor.login, password: cast.reactor.password }));
    },
    async () => {
      for (let i = 0; !stopping; i++) await timed('history', () => gql(on(i), HistoryDocument, { roomName: room, first: 20 }, cast.reactor.token));
    },
  ];
  const running = Promise.all(loops.map((loop) => loop()));
  return {
    room,
    itemId,
    offeredUnits,
    acknowledged,
    records,
    async stop() {
      stopping = true;
      await running;
    },
  };
}

/** A purchase answered but not completed is half written: a failure. */
const completed = (res: GqlResult<{ buyItem: { status: string } }>) => (res.data?.buyItem.status === 'COMPLETED' ? undefined : `answered ${res.data?.buyItem.status}`);

export interface WindowCount {
  answered: Record<LoadKind, number>;
  /** The longest wait, in ms, of a request of each kind that overlapped the window (answered or not). */
  longest: Record<LoadKind, number>;
  failures: string[];
}

/** The requests of each kind started and answered inside [from, to], and every failure of a request that overlaps it. */
export function countWindow(load: FaultLoad, from: number, to: number): WindowCount {
  const answered = Object.fromEntries(LOAD_KINDS.map((kind) => [kind, 0])) as Record<LoadKind, number>;
  const longest = { ...answered };
  const failures: string[] = [];
  for (const r of load.records) {
    const overlaps = r.answeredAt >= from && r.startedAt <= to;
    if (overlaps) longest[r.kind] = Math.max(longest[r.kind], r.answeredAt - r.startedAt);
    if (r.failure && overlaps) failures.push(`${r.kind}: ${r.failure}`);
    else if (!r.failure && r.startedAt >= from && r.answeredAt <= to) answered[r.kind] += 1;
  }
  return { answered, longest, failures };
}

export interface WindowRule {
  /** Requests of each kind answered inside the window, at least: a loop blocked through it answers none. */
  floor: number;
}

/** Prints the window's counts and longest waits, and requires its rule of them, and no request failed. */
export function expectWindow(load: FaultLoad, what: string, from: number, to: number, rule: WindowRule): WindowCount {
  const count = countWindow(load, from, to);
  const kinds = LOAD_KINDS.map((kind) => `${kind} ${count.answered[kind]} (longest ${count.longest[kind]} ms)`).join(', ');
  console.log(`[fault] ${what} (${((to - from) / 1000).toFixed(1)} s): answered inside it ${kinds}; ${count.failures.length} failed`);
  expect(count.failures).toEqual([]);
  for (const kind of LOAD_KINDS) expect(count.answered[kind], `${kind} requests answered ${what}`).toBeGreaterThanOrEqual(rule.floor);
  return count;
}

/** Every acknowledged write, found exactly once where the API reads it (at the app's consistency). */
export async function expectEveryWriteExactlyOnce(app: App, load: FaultLoad, cast: LoadCast): Promise<void> {
  const { acknowledged: ack } = load;
  expect(load.records.filter((r) => r.failure).map((r) => `${r.kind}: ${r.failure}`)).toEqual([]);

  // Posts: each acknowledged one once, and no post of the load that was not acknowledged.
  const history = await roomHistory(app, load.room, cast.poster);
  const loadPosts = history.filter((m) => m.content.startsWith('load '));
  expect(loadPosts.map((m) => m.id).sort()).toEqual(ack.posts.map((p) => p.id).sort());

  // Rooms: each created one exists with its creator, and holds the joiner's one system message.
  for (const name of ack.rooms) {
    const room = (await gqlOk(app, RoomDocument, { roomName: name }, cast.creator.token)).room;
    expect(room?.creator?.login, name).toBe(cast.creator.login);
  }
  for (const name of ack.joins) {
    const messages = await roomHistory(app, name, cast.joiner);
    expect(messages.filter((m) => m.systemMessage && m.author === cast.joiner.login).length, `${name}'s join message`).toBe(1);
  }

  // Direct messages: each once in the conversation, and the recipient's unread count is all of them.
  const dms = await conversation(app, cast.recipient, cast.sender.login);
  expect(dms.map((m) => m.id).sort()).toEqual(ack.directMessages.map((m) => m.id).sort());
  const inbox = await gqlOk(app, InboxSummaryDocument, { first: 50 }, cast.recipient.token);
  const unread = inbox.conversations.edges.find((e) => e.node.partner.login === cast.sender.login)?.node.unreadCount;
  expect(unread).toBe(ack.directMessages.length);

  // Reactions: each emoji the reactor was told it added is there, counted once.
  for (const [messageId, emojis] of ack.reactions) {
    const reactions = (await gqlOk(app, MessageReactionsDocument, { messageId }, cast.reactor.token)).message!.reactions;
    for (const emoji of emojis) expect(reactions.find((r) => r.emoji === emoji)?.count, `${emoji} on ${messageId}`).toBe(1);
  }

  // Purchases: each once in the buyer's list, and stock = offered − sold.
  const purchases = await myPurchases(app, cast.buyer);
  const ofItem = purchases.filter((p) => p.item.id === load.itemId);
  expect(ofItem.map((p) => p.id).sort()).toEqual(ack.purchases.map((p) => p.id).sort());
  expect(ofItem.every((p) => p.status === 'COMPLETED')).toBe(true);
  const item = (await gqlOk(app, ItemDocument, { itemId: load.itemId }, cast.buyer.token)).item!;
  expect(item.availableUnits).toBe(load.offeredUnits - ofItem.length);
}

interface HistoryEntry {
  id: string;
  content: string;
  systemMessage: boolean;
  author?: string;
}

interface Page<T> {
  edges: Array<{ node: T }>;
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
}

/** Every node of a connection, 200 a page, following endCursor until the last page. */
async function allPages<T>(readPage: (after: string | null) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await readPage(after);
    out.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage) return out;
    after = page.pageInfo.endCursor!;
  }
}

/** Every message of a room, page by page. */
export async function roomHistory(app: App, room: string, reader: TestUser): Promise<HistoryEntry[]> {
  const nodes = await allPages(async (after) => (await gqlOk(app, HistoryDocument, { roomName: room, first: 200, after }, reader.token)).room!.messages!);
  return nodes.map((node) => ({ id: node.id, content: node.content ?? '', systemMessage: Boolean(node.systemMessage), author: node.author?.login }));
}

async function conversation(app: App, reader: TestUser, partner: string) {
  const nodes = await allPages(async (after) => (await gqlOk(app, ConversationMessagesDocument, { with: partner, first: 200, after }, reader.token)).conversation!.messages);
  return nodes.map((node) => ({ id: node.id, content: node.content ?? '' }));
}

async function myPurchases(app: App, buyer: TestUser) {
  type Purchase = { id: string; status: string; item: { id: string } };
  return (await allPages(async (after) => (await gqlOk(app, MyPurchasesDocument, { first: 200, after }, buyer.token)).myPurchases)) as Purchase[];
}
