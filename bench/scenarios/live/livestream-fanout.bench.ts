/**
 * A livestream room's fan-out against a channel's of the same size: two Parley instances (compiled, production mode)
 * sharing one Redis, two rooms of 1,000 participants (the same people), one CHANNEL and one LIVESTREAM, each followed
 * by all of them on a graphql-ws socket of its own, half on each instance. The same chat traffic goes to each room:
 * per message posted, two reactions to it, one typing notice and one read marker moved to it, each by a different
 * participant. A channel fans all of it out to every socket (reactions, read markers and votes coalesced per window);
 * a livestream only the messages. The two rooms alternate rate by rate, so machine noise falls on both alike.
 */
import { startServerProcess, type ServerProcess } from '../../kit/servers/server-process.js';
import { PRODUCTION_ENV, remoteApp } from '../../kit/remote-parley.js';
import { joinAll, openClients, SUBSCRIBERS, type Stoppable } from '../../kit/fanout/setup.js';
import { runStep, warmUp, type Contender, type StepResult } from '../../kit/fanout/ramp.js';
import { oneRedis } from '../../kit/fanout/bus.js';
import { cassandraPid, watchCpu } from '../../kit/profiles/process-cpu.js';
import { gql } from '../../../test/testkit/http.js';
import { signUp, signUpMany, type TestUser } from '../../../test/testkit/data/users.js';
import { uniqueRoomName } from '../../../test/testkit/data/rooms.js';

const RATES = [5, 10, 20, 40];
const STEP_MS = 5_000;
const WARM_UP_MAX = 300;
const CREATE = 'mutation($n: String!, $k: RoomKind!) { createRoom(input: { name: $n, kind: $k }) { name } }';
const POST = 'mutation Post($roomName: String!, $content: String!) { postMessage(roomName: $roomName, content: $content) { id } }';
const REACT = 'mutation($m: ID!, $e: String!) { addReaction(messageId: $m, emoji: $e) { id } }';
const TYPING = 'mutation($r: String!) { sendTyping(roomName: $r) }';
const MARK_READ = 'mutation($r: String!, $m: ID!) { markRoomRead(roomName: $r, upTo: $m) { unreadCount } }';

interface Measured extends StepResult {
  cores: { servers: number; clients: number; cassandra: number };
  /** Frames that were not messages, per second of the step: the room's other events, fanned out. */
  otherPerSec: number;
}

const f = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '–');

/** A room of `kind` whose poster posts, and whose other participants react, type and read as each post goes out. */
async function roomContender(kind: string, servers: ServerProcess[], poster: TestUser, members: TestUser[], maxSeq: number, started: Stoppable[]): Promise<Contender> {
  const app = remoteApp(servers[0]!.url);
  const roomName = uniqueRoomName(kind.toLowerCase());
  const created = await gql(app, CREATE, { n: roomName, k: kind }, poster.token);
  if (created.errors?.length) throw new Error(`createRoom ${kind}: ${JSON.stringify(created.errors)}`);
  await joinAll(servers[0]!.url, roomName, members);
  let next = 0;
  const someone = () => members[next++ % members.length]!;
  // The side traffic goes to the other instance: as in production, the room's people are spread over instances.
  const other = remoteApp(servers[1]!.url);
  return {
    name: kind === 'LIVESTREAM' ? 'livestream' : 'channel',
    serverPids: servers.map((s) => s.pid),
    sockets: SUBSCRIBERS,
    clients: await openClients(servers.map((s) => s.url), [poster, ...members].map((u) => u.token), roomName, maxSeq, started),
    post: async (content) => {
      const posted = await gql(app, POST, { roomName, content }, poster.token);
      const id = (posted.data as { postMessage?: { id: string } } | undefined)?.postMessage?.id;
      if (!id) return false;
      // Answered or refused alike (a livestream refuses typing): what counts is what reaches the sockets.
      await Promise.all([
        gql(other, REACT, { m: id, e: '👍' }, someone().token),
        gql(other, REACT, { m: id, e: '🎉' }, someone().token),
        gql(other, TYPING, { r: roomName }, someone().token),
        gql(other, MARK_READ, { r: roomName, m: id }, someone().token),
      ]);
      return true;
    },
  };
}

export default async function run(): Promise<string> {
  const began = Date.now();
  const bus = oneRedis();
  const prefix = `bench-livestream-${process.pid}-${Date.now()}:`;
  const started: Stoppable[] = [];
  try {
    const env = { ...PRODUCTION_ENV, ...bus.env, REDIS_PREFIX: prefix };
    const servers: ServerProcess[] = [];
    for (let i = 0; i < 2; i++) {
      servers.push(await startServerProcess(env));
      started.push(servers[i]!);
    }
    const app = remoteApp(servers[0]!.url);
    const poster = await signUp(app);
    const members = await signUpMany(app, SUBSCRIBERS - 1, 'live');
    const posted = (rates: number[]) => rates.reduce((a, r) => a + (r * STEP_MS) / 1000, 0);
    const maxSeq = WARM_UP_MAX + posted([10, ...RATES]) + 1;
    const channel = await roomContender('CHANNEL', servers, poster, members, maxSeq, started);
    const livestream = await roomContender('LIVESTREAM', servers, poster, members, maxSeq, started);
    const setupMs = Date.now() - began;
    const contenders = [channel, livestream];
    const next = new Map<Contender, number>();
    for (const c of contenders) next.set(c, await warmUp(c, 0, WARM_UP_MAX));
    // One unreported step each at 10 posts/s: brings the servers' code and the node to speed.
    for (const c of contenders) next.set(c, next.get(c)! + (await runStep(c, 10, STEP_MS, next.get(c)!)).posts);
    const results = new Map<Contender, Measured[]>(contenders.map((c) => [c, []]));
    const cassandra = cassandraPid();
    for (const rate of RATES) {
      for (const c of contenders) {
        const seq0 = next.get(c)!;
        const cpu = watchCpu({ servers: c.serverPids, clients: c.clients.map((k) => k.pid), cassandra: cassandra ? [cassandra] : [] });
        const stepBegan = Date.now();
        const step = await runStep(c, rate, STEP_MS, seq0);
        const measured: Measured = { ...step, cores: cpu(), otherPerSec: (step.other * 1000) / (Date.now() - stepBegan) };
        next.set(c, seq0 + step.posts);
        results.get(c)!.push(measured);
        console.log(`${c.name} @ ${rate}/s: ${f(step.deliveriesPerSec)} message deliveries/s, ${f(measured.otherPerSec)} other frames/s, p99 ${f(step.p99, 1)} ms, lost ${step.lost}`);
      }
    }
    return report(results, channel, livestream, { setupMs, totalMs: Date.now() - began });
  } finally {
    for (const s of started.reverse()) await s.stop().catch((err: Error) => console.error(`teardown: ${err.message}`));
    bus.close();
  }
}

function report(results: Map<Contender, Measured[]>, channel: Contender, livestream: Contender, time: { setupMs: number; totalMs: number }): string {
  const rows: string[] = [];
  for (const c of [channel, livestream]) {
    for (const s of results.get(c)!) {
      const framesPerPost = s.posts > 0 ? (s.delivered + s.other) / (s.posts * SUBSCRIBERS) : NaN;
      const cpuUsPerDelivery = s.deliveriesPerSec > 0 ? (s.cores.servers * 1_000_000) / s.deliveriesPerSec : NaN;
      rows.push(
        `| ${c.name} | ${s.rate} | ${f(s.postedPerSec, 1)} | ${f(s.postP50, 1)} | ${f(s.deliveriesPerSec)} | ${f(s.otherPerSec)} | ${f(framesPerPost, 2)} | ${f(s.p50, 1)} | ${f(s.p99, 1)} | ${s.lost} | ${s.failedPosts} | ${f(s.cores.servers, 2)} | ${f(cpuUsPerDelivery, 1)} | ${f(s.cores.clients, 2)} | ${f(s.cores.cassandra, 2)} |`,
      );
    }
  }
  const ratios = RATES.map((rate) => {
    const ch = results.get(channel)!.find((s) => s.rate === rate)!;
    const ls = results.get(livestream)!.find((s) => s.rate === rate)!;
    const frames = (s: Measured) => s.deliveriesPerSec + s.otherPerSec;
    return `| ${rate} | ${f(frames(ch))} | ${f(frames(ls))} | ${f(frames(ls) / frames(ch), 2)} | ${f(ch.cores.servers, 2)} | ${f(ls.cores.servers, 2)} | ${f(ls.cores.servers / ch.cores.servers, 2)} | ${f(ch.p99, 1)} | ${f(ls.p99, 1)} |`;
  });
  return [
    `Two Parley processes (compiled, NODE_ENV=production) sharing one Redis; two rooms of ${SUBSCRIBERS} participants (the same`,
    'people), a CHANNEL and a LIVESTREAM, each followed by every participant on a graphql-ws socket of its own, half on each',
    "instance. One poster posts through the first instance's postMessage, open loop (at most 64 posts in flight); as each post",
    'is answered, four other participants act on the second instance: two reactions to it, one sendTyping and one',
    'markRoomRead up to it (a livestream refuses the typing, and stores the reactions and markers without publishing them).',
    `${STEP_MS / 1000} s per step; the rooms alternate rate by rate, after one unreported step each at 10 posts/s.`,
    '',
    'Message deliveries/s: distinct (post, socket) deliveries over the span from the first post to the last receipt. Other',
    'frames/s: every frame that was not a message (typing, reactions, read updates), over the step. Frames per post per',
    'socket: all frames received in the step over posts × sockets. Latency: a message\'s receipt minus its send, the',
    "post's own write included. Cores: CPU seconds per second of the step (/proc) of both server processes, of the two",
    "subscriber processes of that room, and of the Cassandra node; server core-µs per delivery: the servers' CPU time over",
    'the message deliveries. On this 2-core machine everything shares the CPU: compare the two rooms at the same rate.',
    '',
    '| room | posts/s offered | posted/s | post p50 ms | message deliveries/s | other frames/s | frames per post per socket | p50 ms | p99 ms | lost | failed posts | servers, cores | server core-µs per delivery | subscribers, cores | Cassandra, cores |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Side by side, all frames fanned out per second and the servers\' cores:',
    '',
    '| posts/s | channel frames/s | livestream frames/s | livestream/channel | channel server cores | livestream server cores | livestream/channel | channel p99 ms | livestream p99 ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...ratios,
    '',
    `Time: setup (instances, ${SUBSCRIBERS} sign-ups, two rooms' joins, sockets) ${f(time.setupMs / 1000)} s, total ${f(time.totalMs / 1000)} s.`,
  ].join('\n');
}
