/**
 * The fan-out benchmark's stage, shared by bench/scenarios/live/fanout.bench.ts and the
 * fan-out profiler (bench/kit/fanout/profile.ts): two Parley instances (compiled,
 * production mode) sharing Redis, two relay-floor processes on a channel of
 * their own, one room of SUBSCRIBERS participants (the poster and the
 * others), and both contenders' subscriber sockets, half on each instance.
 */
import { startServerProcess, type ServerProcess } from '../servers/server-process.js';
import { PRODUCTION_ENV, remoteApp } from '../remote-parley.js';
import { startRelayProcess, relayPayload } from './relay-floor.js';
import { startFanoutClients, type FanoutClients } from './clients.js';
import type { Contender } from './ramp.js';
import type { FanoutBus } from './bus.js';
import { redisEventChannel } from '../../../src/pubsub/redis.js';
import { EventStamp } from '../../../src/pubsub/event-stamps.js';
import { roomChannel } from '../../../src/resolvers/rooms/live/feed.js';
import { newMessage } from '../../../src/resolvers/rooms/model.js';
import { JoinRoomDocument } from '../../../test/generated/graphql.js';
import { gql, gqlOk } from '../../../test/testkit/http.js';
import { roomWith } from '../../../test/testkit/data/rooms.js';
import { signUp, signUpMany, type TestUser } from '../../../test/testkit/data/users.js';

export const SUBSCRIBERS = 1_000;
/** What a chat client needs of a new message; the relay sends this very shape. */
export const SUBSCRIPTION = 'subscription Fanout($roomName: String!) { roomEvents(roomName: $roomName) { __typename ... on MessagePosted { message { id content } } } }';
const POST = 'mutation Post($roomName: String!, $content: String!) { postMessage(roomName: $roomName, content: $content) { id } }';

export interface Stoppable {
  stop(): Promise<void>;
}

export interface FanoutStage {
  parley: Contender;
  /**
   * Parley's delivery alone: the same instances and sockets as `parley`, its
   * events published straight to the room's Redis channel, as a post would
   * publish them, with no post written or served (what delivery costs
   * without the posting beside it).
   */
  deliveryOnly: Contender;
  relay: Contender;
  /** Parley's instances: the first one takes every post. */
  servers: ServerProcess[];
  relays: ServerProcess[];
  /** Stops everything, newest first (sockets close before the servers they are on). */
  stop(): Promise<void>;
}

/** Joins every member, a few at a time (each join is an LWT on the room's row, so not too many at once). */
export async function joinAll(url: string, roomName: string, members: TestUser[]): Promise<void> {
  for (let i = 0; i < members.length; i += 8) {
    await Promise.all(members.slice(i, i + 8).map((m) => gqlOk(remoteApp(url), JoinRoomDocument, { roomName: roomName }, m.token)));
  }
}

/** Two subscriber processes, one per instance, each with half the sockets. */
export async function openClients(urls: string[], tokens: string[], roomName: string, maxSeq: number, started: Stoppable[]): Promise<FanoutClients[]> {
  const half = tokens.length / 2;
  return Promise.all(
    urls.map(async (url, i) => {
      const clients = startFanoutClients();
      started.push(clients);
      const wsUrl = `${url.replace(/^http/, 'ws')}/graphql`;
      await clients.open({ url: wsUrl, tokens: tokens.slice(i * half, (i + 1) * half), query: SUBSCRIPTION, variables: { roomName }, maxSeq });
      return clients;
    }),
  );
}

/**
 * Sets the stage. `maxSeq` bounds the sequence numbers posted (it sizes each
 * socket's bitmap); `nodeArgs` go to Parley's processes (such as --cpu-prof).
 */
export async function setUpFanout(maxSeq: number, bus: FanoutBus, nodeArgs: string[] = []): Promise<FanoutStage> {
  // Keys and channels of this run only: the Redis may be shared with others.
  const prefix = `bench-fanout-${process.pid}-${Date.now()}:`;
  const started: Stoppable[] = [];
  const stop = async () => {
    for (const s of started.reverse()) await s.stop().catch((err: Error) => console.error(`teardown: ${err.message}`));
    bus.close();
  };
  try {
    const env = { ...PRODUCTION_ENV, ...bus.env, REDIS_PREFIX: prefix };
    // One after the other: both apply the keyspace's migrations at start.
    const servers: ServerProcess[] = [];
    for (let i = 0; i < 2; i++) {
      servers.push(await startServerProcess(env, nodeArgs));
      started.push(servers[i]!);
    }
    const relayChannel = `${prefix}relay`;
    const relays: ServerProcess[] = [];
    for (let i = 0; i < 2; i++) {
      relays.push(await startRelayProcess(bus, relayChannel));
      started.push(relays[i]!);
    }

    // The room holds at most 1,000 participants: the poster and 999 others, each with one socket.
    const app = remoteApp(servers[0]!.url);
    const poster = await signUp(app);
    const roomName = await roomWith(app, poster);
    const members = await signUpMany(app, SUBSCRIBERS - 1, 'fan');
    await joinAll(servers[0]!.url, roomName, members);
    const tokens = [poster, ...members].map((u) => u.token);

    // One poster, on the first instance: every post goes through one instance's sequencer, so history order is one order.
    const parley: Contender = {
      name: 'Parley',
      serverPids: servers.map((s) => s.pid),
      sockets: SUBSCRIBERS,
      clients: await openClients(servers.map((s) => s.url), tokens, roomName, maxSeq, started),
      post: async (content) => {
        const result = await gql(app, POST, { roomName, content }, poster.token);
        return !result.errors?.length && !!result.data;
      },
    };
    const channel = redisEventChannel(prefix, roomChannel(roomName));
    const author = { login: poster.login, firstname: poster.firstname, lastname: poster.lastname };
    const room = { name: roomName, createdAt: new Date(0) };
    // Stamped as an instance stamps what it publishes, so the instances open these as they open a post's.
    const stamp = new EventStamp();
    const deliveryOnly: Contender = {
      ...parley,
      name: 'Parley, delivery alone',
      post: async (content) => {
        const message = newMessage(room, new Date(), author, content, false);
        return (await bus.publish(channel, JSON.stringify(stamp.stamp({ kind: 'MessagePosted', roomName, message })))) >= 0;
      },
    };
    const relay: Contender = {
      name: 'relay floor',
      serverPids: relays.map((r) => r.pid),
      sockets: SUBSCRIBERS,
      clients: await openClients(relays.map((r) => r.url), tokens, roomName, maxSeq, started),
      post: async (content) => (await bus.publish(relayChannel, relayPayload(roomName, content))) >= 0,
    };
    return { parley, deliveryOnly, relay, servers, relays, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
