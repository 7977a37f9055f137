/** A Redis outage degrades live features; it never takes logins down or crashes the server. */
import { describe, expect, it } from 'vitest';
import { ConversationsDocument, HistoryDocument, InboxEventsDocument, LoginDocument, MeDocument, RoomEventsDocument } from '../generated/graphql.js';
import { startApp, stopApp, REDIS_URL } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { signUp } from '../testkit/data/users.js';
import { TcpProxy } from '../testkit/faults/tcp-proxy.js';
import { eventually } from '../testkit/poll.js';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { RedisBackedPubSub, redisEventChannel } from '../../src/pubsub/redis.js';
import { MISSED_CHANNEL } from '../../src/pubsub/missed-publishes.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';
import { inboxChannel } from '../../src/resolvers/messenger/events.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { send } from '../testkit/data/messenger.js';
import { subscribe, wsClient } from '../testkit/ws.js';

/** Pub/sub counts nothing here. */
const NO_METER = { eventPublished: () => {}, eventDelivered: () => {} };

/** A closable proxy in front of the Redis the tests use (opened by the test). */
function redisProxy(): TcpProxy {
  const { hostname, port } = new URL(REDIS_URL);
  return new TcpProxy(hostname, Number(port));
}

describe('Redis unreachable', () => {
  it('keeps logins working (the limiter fails open), fails /ready, and recovers', async () => {
    const proxy = redisProxy();
    await proxy.open();
    const app = await startApp({ redis: true, env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
    const user = await signUp(app);
    expect((await fetch(`${app.url}/ready`)).status).toBe(200);

    await proxy.close();
    await eventually(async () => (await fetch(`${app.url}/ready`)).status === 503, { what: '/ready to fail' });
    const login = await gql(app, LoginDocument, { login: user.login, password: user.password });
    expect(codes(login)).toEqual([]);
    const token = login.data!.login.token;
    expect((await gqlOk(app, MeDocument, {}, token)).me?.login).toBe(user.login);
    // A wrong password is still refused as such, not with an internal error.
    expect(codes(await gql(app, LoginDocument, { login: user.login, password: 'wrong-password' }))).toEqual([
      'INVALID_CREDENTIALS',
    ]);

    await proxy.open();
    await eventually(async () => (await fetch(`${app.url}/ready`)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: '/ready to recover',
    });
  });
});

describe('A subscription made while Redis is unreachable', () => {
  it('is refused, and nothing is left unhandled to end the process', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    const proxy = redisProxy();
    await proxy.open();
    await proxy.close(); // a port where nothing answers
    const events = RedisBackedPubSub.connect(`redis://127.0.0.1:${proxy.port}`, pino({ level: 'silent' }), `parley:down-${randomUUID()}:`, NO_METER);
    try {
      await expect(events.listen('room.x', { onEvent: () => {} })).rejects.toThrow(/max retries/);
      // Node reports a rejection as unhandled once the turn it happened in is over.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      // Nothing of the refused subscription is kept: not its listener, nor its channel to subscribe again once Redis is back.
      expect(events.listeners('room.x')).toBe(0);
      const shared = (events as unknown as { events: { redisChannels(): string[] } }).events;
      expect(shared.redisChannels().filter((channel) => channel.endsWith('room.x'))).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
      await events.close();
    }
  });
});

describe('A channel left while Redis is unreachable', () => {
  interface LeftStage {
    proxy: TcpProxy;
    events: RedisBackedPubSub;
    logs: string[];
    /** Leaves room.left (room.kept stays). */
    leave: () => Promise<void>;
    isLive: () => boolean;
  }

  /** An instance behind a closable proxy listening to room.left and room.kept; after `test`, what Redis sends it. */
  async function leavingWhileDown(test: (stage: LeftStage) => Promise<void>): Promise<void> {
    const proxy = redisProxy();
    await proxy.open();
    const logs: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
    const prefix = `parley:left-${randomUUID()}:`;
    const events = RedisBackedPubSub.connect(`redis://127.0.0.1:${proxy.port}`, logger, prefix, NO_METER);
    let live = true;
    events.watchDelivery({ onDeliveryChange: (now) => (live = now) });
    const raw = new Redis(REDIS_URL);
    const subscribersOf = async (channel: string) => ((await raw.pubsub('NUMSUB', redisEventChannel(prefix, channel))) as [string, number])[1];
    try {
      const leaving = { onEvent: () => {} };
      await events.listen('room.left', leaving);
      await events.listen('room.kept', { onEvent: () => {} });
      expect(await subscribersOf('room.left')).toBe(1);
      await test({ proxy, events, logs, leave: () => events.unlisten('room.left', leaving), isLive: () => live });
      await eventually(() => live, { timeoutMs: 30_000, what: 'delivery to be back' });
      // Delivery is back once a PING sent after the reconnect's SUBSCRIBEs is answered: the channel left is not among them.
      expect(await subscribersOf('room.kept')).toBe(1);
      expect(await subscribersOf('room.left')).toBe(0);
    } finally {
      raw.disconnect();
      await events.close();
      await proxy.close();
    }
  }

  it('is not subscribed again once Redis is back, though its UNSUBSCRIBE failed', () =>
    leavingWhileDown(async ({ proxy, logs, leave, isLive }) => {
      await proxy.close();
      await leave();
      // Reconnects refused: ioredis fails the commands it holds after its retries, the UNSUBSCRIBE among them.
      await eventually(() => logs.some((line) => line.includes('"method":"unsubscribe"')), { what: 'the UNSUBSCRIBE to fail' });
      expect(isLive()).toBe(false);
      await proxy.open(proxy.port);
    }));

  it('is not subscribed again once Redis is back, when it was left during a reconnect that did not end', () =>
    leavingWhileDown(async ({ proxy, events, leave }) => {
      await proxy.close();
      await proxy.open(proxy.port);
      proxy.dropReplies();
      const subscriber = (events as unknown as { subscriber: Redis }).subscriber;
      await eventually(() => subscriber.status === 'connect', { what: 'the subscriber to be in its handshake' });
      // Written to the new connection at once, and never answered: it neither succeeds nor fails.
      await leave();
      await proxy.close();
      await proxy.open(proxy.port);
    }));
});

describe('Redis pub/sub across a reconnect', () => {
  interface Stage {
    proxy: TcpProxy;
    events: RedisBackedPubSub;
    /** The hearing instance's own proxy, when it has one. */
    hearingProxy: TcpProxy;
    hearing: RedisBackedPubSub;
    heard: string[];
    prefix: string;
  }

  /**
   * A publisher reaching Redis through a closable proxy, and what another instance hears of channel room.r,
   * connected directly (or through a proxy of its own, `hearingBehindProxy`).
   */
  async function withPublisherBehindProxy(test: (stage: Stage) => Promise<void>, { hearingBehindProxy = false } = {}): Promise<void> {
    const [proxy, hearingProxy] = [redisProxy(), redisProxy()];
    await Promise.all([proxy.open(), hearingProxy.open()]);
    const logger = pino({ level: 'silent' });
    const prefix = `parley:reconnect-${randomUUID()}:`;
    const events = RedisBackedPubSub.connect(`redis://127.0.0.1:${proxy.port}`, logger, prefix, NO_METER);
    const hearing = RedisBackedPubSub.connect(hearingBehindProxy ? `redis://127.0.0.1:${hearingProxy.port}` : REDIS_URL, logger, prefix, NO_METER);
    const heard: string[] = [];
    try {
      await hearing.listen<{ n: string }>('room.r', { onEvent: (e) => heard.push(e.n) });
      await test({ proxy, events, hearingProxy, hearing, heard, prefix });
    } finally {
      await Promise.all([events.close(), hearing.close(), proxy.close(), hearingProxy.close()]);
    }
  }

  /** How many notices of failed publishes reach Redis, counted by a connection of the test's own. */
  async function countNotices(prefix: string): Promise<{ count: () => number; stop: () => void }> {
    const raw = new Redis(REDIS_URL);
    let notices = 0;
    raw.on('message', () => (notices += 1));
    await raw.subscribe(redisEventChannel(prefix, MISSED_CHANNEL));
    return { count: () => notices, stop: () => raw.disconnect() };
  }

  /**
   * A publish made while the publisher cannot reach Redis: it fails (timed out, or dropped after the reconnects fail).
   * Returns when it was made: from `calledAt` to `madeBy` (ms), the call before its promise was returned.
   */
  async function failPublish(
    proxy: TcpProxy,
    events: RedisBackedPubSub,
    { alsoCut = [], once = () => true }: { alsoCut?: TcpProxy[]; once?: () => boolean } = {},
  ): Promise<{ calledAt: number; madeBy: number }> {
    const reconnecting = new Promise((resolve) => events.publisher.once('reconnecting', resolve));
    await Promise.all([proxy.close(), ...alsoCut.map((p) => p.close())]);
    await reconnecting;
    await eventually(once, { what: 'the moment to publish' });
    const calledAt = Date.now();
    const publishing = events.publish('room.r', { n: 'may reach nobody' });
    const madeBy = Date.now();
    await expect(publishing).rejects.toThrow();
    return { calledAt, madeBy };
  }

  /** Publishes a last event and waits for the hearing instance to have it: it has then had everything sent before. */
  async function drained(events: RedisBackedPubSub, heard: string[]): Promise<void> {
    void events.publish('room.r', { n: 'last' }).catch(() => {});
    await eventually(() => heard.includes('last'), { what: 'the last event' });
  }

  /** After one event ('before'), a reconnect whose ready check is never answered (as while Redis loads its data): the handshake lasts. */
  async function stallHandshake(proxy: TcpProxy, events: RedisBackedPubSub): Promise<void> {
    await events.publish('room.r', { n: 'before' });
    await proxy.close();
    await proxy.open(proxy.port);
    proxy.dropReplies();
    await eventually(() => events.publisher.status === 'connect', { what: 'the publisher to be in its handshake' });
  }

  it("keeps one publisher's order: events made while it was down, then during its handshake", async () => {
    await withPublisherBehindProxy(async ({ proxy, events, heard }) => {
      await events.publish('room.r', { n: 'before' });
      const reconnecting = new Promise((resolve) => events.publisher.once('reconnecting', resolve));
      await proxy.close();
      await reconnecting;
      const whileDown = events.publish('room.r', { n: 'while down' });
      // Published the moment the connection is back, before its handshake has ended (ioredis's 'connect').
      let statusThen = '';
      const inHandshake = new Promise<void>((resolve, reject) =>
        events.publisher.once('connect', () => {
          statusThen = events.publisher.status;
          events.publish('room.r', { n: 'in the handshake' }).then(resolve, reject);
        }),
      );
      await proxy.open(proxy.port);
      await Promise.all([whileDown, inHandshake]);
      expect(statusThen).toBe('connect');
      await eventually(() => heard.length >= 3, { what: 'three events' });
      expect(heard).toEqual(['before', 'while down', 'in the handshake']);
    });
  });

  it('hears once an event ioredis resends after a drop, when Redis had run it already', async () => {
    await withPublisherBehindProxy(async ({ proxy, events, heard }) => {
      await events.publish('room.r', { n: 'before' });
      // Redis runs the next PUBLISH, but its reply is lost with the connection: ioredis resends it.
      proxy.dropReplies();
      const inFlight = events.publish('room.r', { n: 'in flight' });
      await eventually(() => heard.includes('in flight'), { what: 'Redis to run the publish' });
      await proxy.close();
      await proxy.open(proxy.port);
      await inFlight; // answered: the resend reached Redis
      await events.publish('room.r', { n: 'after' });
      await eventually(() => heard.includes('after'), { what: 'the publish after the reconnect' });
      expect(heard).toEqual(['before', 'in flight', 'after']);
    });
  });

  it('delivers, once each, resent events that reach Redis after later ones (the reconnect failed while resending)', async () => {
    await withPublisherBehindProxy(async ({ proxy, events, heard }) => {
      await events.publish('room.r', { n: 'before' });
      // Sent, never reaching Redis: ioredis will resend both.
      proxy.dropEverything();
      const inFlight = ['a1', 'a2'].map((n) => events.publish('room.r', { n }));
      await eventually(() => (events.publisher as unknown as { commandQueue: { length: number } }).commandQueue.length === 2, {
        what: 'both publishes to be written',
      });
      const reconnecting = new Promise((resolve) => events.publisher.once('reconnecting', resolve));
      await proxy.close();
      await proxy.open(proxy.port);
      await reconnecting;
      const whileDown = ['b1', 'b2'].map((n) => events.publish('room.r', { n }));
      // The next connection breaks as ioredis resends: its first resend is written, then the socket fails on the
      // spot (a reset seen at write time), so ioredis queues the second behind b1 and b2, queued while it was down.
      events.publisher.once('connect', () => {
        const stream = (events.publisher as unknown as { stream: NodeJS.WritableStream & { destroy(e: Error): void } }).stream;
        const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
        let publishes = 0;
        stream.write = ((chunk: unknown, ...rest: unknown[]) => {
          const written = write(chunk, ...rest);
          if (String(chunk).toLowerCase().includes('publish') && ++publishes === 1) stream.destroy(new Error('write ECONNRESET'));
          return written;
        }) as typeof stream.write;
      });
      // Whether a1 and a2 were answered within their command timeout (two reconnects) is not this test's point.
      await Promise.allSettled([...inFlight, ...whileDown]);
      await eventually(() => heard.length >= 5, { what: 'five events' });
      expect(heard.toSorted()).toEqual(['a1', 'a2', 'b1', 'b2', 'before']);
      expect(heard.at(-1)).toBe('a2'); // the case this test is about: a2 came last, and was still delivered
    });
  });

  it('fails a publish held through a handshake that does not end, and still sends it, in its place, once it does', async () => {
    await withPublisherBehindProxy(async ({ proxy, events, heard }) => {
      await stallHandshake(proxy, events);
      await expect(events.publish('room.r', { n: 'held' })).rejects.toThrow(/^Command timed out/);
      await proxy.close();
      await proxy.open(proxy.port);
      await events.publish('room.r', { n: 'after' });
      await eventually(() => heard.length >= 3, { what: 'three events' });
      expect(heard).toEqual(['before', 'held', 'after']);
    });
  });

  it('tells every instance when a publish failed, from when it was made, though their own connection never dropped', async () => {
    await withPublisherBehindProxy(async ({ proxy, events, hearing }) => {
      const told: Array<[boolean, Date | undefined]> = [];
      hearing.watchDelivery({ onDeliveryChange: (live, lostSince) => told.push([live, lostSince]) });
      await events.publish('room.r', { n: 'before' });
      const failed = await failPublish(proxy, events);
      expect(told).toEqual([]); // the hearing instance's connection is fine: only the publisher can tell it
      await proxy.open(proxy.port);
      await eventually(() => told.length >= 2, { what: 'the notice' });
      expect(told[0]![0]).toBe(false);
      // Lost since the failed publish was made, not since it failed (a command timeout later).
      expect(told[0]![1]!.getTime()).toBeGreaterThanOrEqual(failed.calledAt);
      expect(told[0]![1]!.getTime()).toBeLessThanOrEqual(failed.madeBy);
      expect(told[1]).toEqual([true, undefined]);
    });
  });

  it('sends a notice whose answer was lost again as it was: instances take it once', async () => {
    await withPublisherBehindProxy(async ({ proxy, events, hearing, heard, prefix }) => {
      const told: boolean[] = [];
      hearing.watchDelivery({ onDeliveryChange: (live) => told.push(live) });
      const notices = await countNotices(prefix);
      try {
        await failPublish(proxy, events);
        const ready = new Promise((resolve) => events.publisher.once('ready', resolve));
        await proxy.open(proxy.port);
        await ready;
        // The notice is on its way as the publisher is ready; Redis runs it, its answer is lost: it times out, and goes again.
        proxy.dropReplies();
        await eventually(() => notices.count() >= 2, { what: 'the notice sent twice' });
        await drained(events, heard);
        expect(told).toEqual([false, true]);
      } finally {
        notices.stop();
      }
    });
  });

  it("takes no second interruption from a notice of publishes made while its own delivery was down", async () => {
    await withPublisherBehindProxy(
      async ({ proxy, hearingProxy, events, hearing, heard, prefix }) => {
        const told: boolean[] = [];
        hearing.watchDelivery({ onDeliveryChange: (live) => told.push(live) });
        const notices = await countNotices(prefix);
        try {
          // Redis out of reach of both, as when it restarts (published once the hearing instance knows); it is back first.
          await failPublish(proxy, events, { alsoCut: [hearingProxy], once: () => told[0] === false });
          await hearingProxy.open(hearingProxy.port);
          await eventually(() => told.length >= 2, { what: 'the hearing instance to be told, and live again' });
          await proxy.open(proxy.port);
          await eventually(() => notices.count() >= 1, { what: "the publisher's notice" });
          await drained(events, heard);
          // Its feeds were told to catch up from before the outage, when it was back: the notice adds nothing.
          expect(told).toEqual([false, true]);
        } finally {
          notices.stop();
        }
      },
      { hearingBehindProxy: true },
    );
  });

  it('takes a notice that also covers publishes made after its own delivery was back', async () => {
    await withPublisherBehindProxy(
      async ({ proxy, hearingProxy, events, hearing }) => {
        const told: boolean[] = [];
        hearing.watchDelivery({ onDeliveryChange: (live) => told.push(live) });
        await failPublish(proxy, events, { alsoCut: [hearingProxy], once: () => told[0] === false });
        // A second failure while both are down: it waits for the next notice, behind the first one.
        await expect(events.publish('room.r', { n: 'lost too' })).rejects.toThrow();
        await hearingProxy.open(hearingProxy.port);
        await eventually(() => told.length >= 2, { what: 'the hearing instance to be live again' });
        const back = Date.now();
        await eventually(() => Date.now() > back, { intervalMs: 1, what: 'the clock to pass the moment it was back' });
        // The publisher is still cut off: this one fails after the hearing instance was back, and joins the second notice.
        await expect(events.publish('room.r', { n: 'lost after' })).rejects.toThrow();
        await proxy.open(proxy.port);
        await eventually(() => told.length >= 4, { what: 'the notice' });
        expect(told).toEqual([false, true, false, true]);
      },
      { hearingBehindProxy: true },
    );
  });

  it('holds at most 10,000 publishes through a handshake: the next fails at once, and is never sent', async () => {
    await withPublisherBehindProxy(async ({ proxy, events, heard }) => {
      await stallHandshake(proxy, events);
      const held = Array.from({ length: 10_000 }, (_, i) => events.publish('room.r', { n: `held ${i}` }));
      const refused = events.publish('room.r', { n: 'one too many' });
      // Refused before any held publish times out (those wait 1 s).
      const first = await Promise.race([refused.then(() => 'sent', (e: Error) => e.message), Promise.any(held.map((p) => p.catch(() => new Promise(() => {})))).then(() => 'a held one settled')]);
      expect(first).toMatch(/too many publishes wait/);
      await Promise.allSettled(held);
      const closed = new Promise((resolve) => events.publisher.once('close', resolve));
      await proxy.close();
      await closed; // the handshake has ended: the held publishes are queued to be sent
      await proxy.open(proxy.port);
      // Every held publish is sent once the connection is back (the 10,000 first, so the next publish does not
      // queue behind them and outlast its command timeout on a slow machine), then one more goes through.
      await eventually(() => heard.length === 10_001, { what: 'the held publishes to be heard', timeoutMs: 30_000 });
      await events.publish('room.r', { n: 'after' });
      await eventually(() => heard.at(-1) === 'after', { what: 'the publish after the handshake' });
      expect(heard.length).toBe(10_002);
      expect(heard).not.toContain('one too many');
    });
  });
});

describe('A publish that failed on one instance', () => {
  it('tells the room and inbox feeds on the other instances to catch up, and catching up finds what was stored', async () => {
    const proxy = redisProxy();
    await proxy.open();
    const a = await startApp({ redis: true, env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
    const b = await startApp({ redis: true });
    const [poster, reader] = await Promise.all([signUp(a), signUp(b)]);
    const client = wsClient(b, reader.token);
    try {
      const room = await roomWith(a, poster, [reader]);
      const feed = subscribe(client, RoomEventsDocument, { roomName: room });
      const inbox = subscribe(client, InboxEventsDocument, {});
      await eventually(() => b.services.pubsub.listeners(roomChannel(room)) === 1 && b.services.pubsub.listeners(inboxChannel(reader.login)) === 1, {
        what: 'both feeds to be live on B',
      });

      // A stores both while it cannot reach Redis; their live events fail there (after the command timeout).
      await proxy.close();
      const started = Date.now();
      const posted = await post(a, poster, room, 'posted while A cannot publish');
      const sent = await send(a, poster, reader, 'sent while A cannot publish');
      await proxy.open(proxy.port);

      // Each event may still arrive late (ioredis sends what it had queued); then the notice.
      let resumeCursor: string | undefined;
      while (!resumeCursor) {
        const event = (await feed.next(30_000)).data?.roomEvents;
        if (event?.__typename === 'FeedInterrupted') resumeCursor = event.resumeCursor;
        else expect(event).toMatchObject({ __typename: 'MessagePosted', message: { id: posted.id } });
      }
      const page = (await gqlOk(b, HistoryDocument, { roomName: room, last: 200, before: resumeCursor }, reader.token)).room!.messages;
      expect(page.edges.map((e) => e.node.id)).toContain(posted.id);

      let interruptedAt: string | undefined;
      while (!interruptedAt) {
        const event = (await inbox.next(30_000)).data?.inboxEvents;
        if (event?.__typename === 'InboxInterrupted') interruptedAt = event.interruptedAt;
        else expect(event).toMatchObject({ __typename: 'DirectMessageReceived', message: { id: sent.id } });
      }
      expect(new Date(interruptedAt).getTime()).toBeGreaterThanOrEqual(started);
      // From before the message was stored: re-reading from it finds the message.
      expect(new Date(interruptedAt).getTime()).toBeLessThanOrEqual(new Date(sent.createdAt).getTime());
      const conversations = (await gqlOk(b, ConversationsDocument, { first: 10 }, reader.token)).conversations.edges;
      expect(conversations.find((e) => e.node.partner.login === poster.login)?.node.unreadCount).toBe(1);
      feed.unsubscribe();
      inbox.unsubscribe();
    } finally {
      await client.dispose();
      await Promise.all([stopApp(a), stopApp(b)]);
      await proxy.close();
    }
  });
});
