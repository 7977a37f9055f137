/**
 * Live fan-out: two Parley instances (compiled, production mode) sharing one
 * Redis (bench/scenarios/live/fanout-cluster.bench.ts: a Redis Cluster), 1,000 graphql-ws subscribers of one room's roomEvents split
 * over them, and one poster whose rate rises step by step. Beside it, the
 * floor: a minimal WebSocket relay (bench/kit/fanout/relay-floor.ts, two processes) of
 * the same frames through the same Redis to the same number of sockets, read
 * by the same client code. The contenders alternate step by step (Parley at a
 * rate, then the relay at that rate), so machine noise falls on both alike.
 * A contender climbs past its latency knee until its deliveries stop rising
 * or it loses events: further on, its backlog would only spill into the next
 * step (and Parley ends a subscription that falls 1,000 events behind).
 */
import { setUpFanout, SUBSCRIBERS } from '../../kit/fanout/setup.js';
import { ONE_REDIS, oneRedis, type FanoutBus } from '../../kit/fanout/bus.js';
import { runStep, warmUp, type Contender, type StepResult } from '../../kit/fanout/ramp.js';
import { cassandraPid, watchCpu } from '../../kit/profiles/process-cpu.js';

const RATES = [2, 5, 10, 20, 40, 80, 160, 320];
const STEP_MS = 5_000;
const WARM_UP_MAX = 300;
/**
 * Each contender first runs one step at this rate, not reported: it brings the
 * servers' code, and for Parley the Cassandra node's (a node started just before
 * served its first 2 posts/s with 0.23 cores busy and p99 202 ms), to speed before
 * the ramp measures them, as the request scenarios' warm-up does.
 */
const WARM_STEP_RATE = 40;
const KNEE_P99_MS = 100;
/** "Deliveries stop rising": a step whose rate doubled gained less than this. */
const RISE = 1.1;

/** A step, and the cores each group of processes kept busy over it. */
interface Measured extends StepResult {
  cores: { servers: number; clients: number; cassandra: number };
}

interface Knees {
  /** The first rate whose p99 passed KNEE_P99_MS. */
  latency?: { rate: number; why: string };
  /** The rate where deliveries stopped rising or events were lost: the contender climbs no further. */
  saturated?: { rate: number; why: string };
}

const f = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '–');

/** Why this step is where latency gave (p99 past the bound), or null. */
function latencyKnee(step: StepResult): string | null {
  return step.p99 > KNEE_P99_MS ? `p99 ${f(step.p99)} ms` : null;
}

/** Why climbing further is pointless or harmful (throughput flat, or events lost), or null. */
function saturated(step: StepResult, previous: StepResult | undefined): string | null {
  if (step.lost > 0 || Object.keys(step.closed).length > 0 || step.other > 0) return `${step.lost} lost, ${step.other} other frames, closed ${JSON.stringify(step.closed)}`;
  if (previous && step.deliveriesPerSec < previous.deliveriesPerSec * RISE) return `deliveries/s ${f(step.deliveriesPerSec)} after ${f(previous.deliveriesPerSec)}`;
  return null;
}

export default function run(): Promise<string> {
  return runFanout(oneRedis());
}

/** The ramp through `bus`, its report in markdown. */
export async function runFanout(bus: FanoutBus): Promise<string> {
  const began = Date.now();
  // Parley's two contenders share its sockets, so their sequence numbers follow one another.
  const posted = (rates: number[]) => rates.reduce((a, r) => a + (r * STEP_MS) / 1000, 0);
  const maxSeq = 2 * (2 * WARM_UP_MAX + posted([WARM_STEP_RATE, ...RATES])) + 1;
  const stage = await setUpFanout(maxSeq, bus);
  try {
    const { parley, deliveryOnly, relay } = stage;
    const setupMs = Date.now() - began;
    const contenders = [parley, deliveryOnly, relay];
    // The next sequence number of each set of sockets.
    const next = new Map<Contender['clients'], number>();
    for (const c of contenders) next.set(c.clients, await warmUp(c, next.get(c.clients) ?? 0, WARM_UP_MAX));
    for (const c of contenders) {
      const seq0 = next.get(c.clients)!;
      next.set(c.clients, seq0 + (await runStep(c, WARM_STEP_RATE, STEP_MS, seq0)).posts);
    }
    const results = new Map<Contender, Measured[]>(contenders.map((c) => [c, []]));
    const cassandra = cassandraPid();
    const knees = new Map<Contender, Knees>(contenders.map((c) => [c, {}]));
    const rampBegan = Date.now();
    for (const rate of RATES) {
      for (const c of contenders) {
        const knee = knees.get(c)!;
        if (knee.saturated) continue;
        const seq0 = next.get(c.clients)!;
        const cpu = watchCpu({ servers: c.serverPids, clients: c.clients.map((k) => k.pid), cassandra: cassandra ? [cassandra] : [] });
        const step: Measured = { ...(await runStep(c, rate, STEP_MS, seq0)), cores: cpu() };
        next.set(c.clients, seq0 + step.posts);
        const steps = results.get(c)!;
        const slow = latencyKnee(step);
        const flat = saturated(step, steps.at(-1));
        steps.push(step);
        if (slow && !knee.latency) knee.latency = { rate, why: slow };
        if (flat) knee.saturated = { rate, why: flat };
        console.log(`${c.name} @ ${rate}/s: ${f(step.deliveriesPerSec)} deliveries/s, p50 ${f(step.p50, 1)} ms, p99 ${f(step.p99, 1)} ms, lost ${step.lost}, dup ${step.duplicated}, out of order ${step.outOfOrder}${flat ? ` (stops: ${flat})` : ''}`);
      }
    }
    return report(bus, results, knees, parley, deliveryOnly, relay, { setupMs, rampMs: Date.now() - rampBegan, totalMs: Date.now() - began });
  } finally {
    await stage.stop();
  }
}

function report(
  bus: FanoutBus,
  results: Map<Contender, Measured[]>,
  knees: Map<Contender, Knees>,
  parley: Contender,
  deliveryOnly: Contender,
  relay: Contender,
  time: { setupMs: number; rampMs: number; totalMs: number },
): string {
  const relayAt = new Map(results.get(relay)!.map((s) => [s.rate, s]));
  const rows: string[] = [];
  for (const c of [parley, deliveryOnly, relay]) {
    for (const s of results.get(c)!) {
      const floor = relayAt.get(s.rate);
      const ratio = c !== relay && floor ? f(s.deliveriesPerSec / floor.deliveriesPerSec, 2) : '';
      const closed = Object.entries(s.closed).map(([code, n]) => `${n}×${code}`).join(' ');
      const cores = `${f(s.cores.servers, 2)} | ${f(s.cores.clients, 2)} | ${f(s.cores.cassandra, 2)}`;
      rows.push(`| ${c.name} | ${s.rate} | ${f(s.postedPerSec, 1)} | ${f(s.postP50, 1)} | ${f(s.deliveriesPerSec)} | ${ratio} | ${f(s.p50, 1)} | ${f(s.p99, 1)} | ${s.lost} | ${s.duplicated} | ${s.outOfOrder} | ${s.failedPosts} | ${closed}${s.other ? ` ${s.other} other` : ''} | ${cores} |`);
    }
  }
  const best = (c: Contender, ok: (s: StepResult) => boolean) => Math.max(0, ...results.get(c)!.filter(ok).map((s) => s.deliveriesPerSec));
  const peak = (c: Contender) => best(c, (s) => s.lost === 0);
  const withinBound = (c: Contender) => best(c, (s) => s.lost === 0 && s.p99 <= KNEE_P99_MS);
  const peakStep = (c: Contender) => results.get(c)!.filter((s) => s.lost === 0).reduce((a, b) => (b.deliveriesPerSec > a.deliveriesPerSec ? b : a));
  const knee = (c: Contender) => {
    const k = knees.get(c)!;
    const latency = k.latency ? `p99 passes ${KNEE_P99_MS} ms at ${k.latency.rate} posts/s (${k.latency.why})` : `p99 stays under ${KNEE_P99_MS} ms`;
    const flat = k.saturated ? `stops at ${k.saturated.rate} posts/s (${k.saturated.why})` : `still rising at ${RATES.at(-1)} posts/s`;
    return `${latency}; ${flat}`;
  };
  const mine = results.get(parley)!;
  const lost = mine.reduce((a, s) => a + s.lost, 0);
  const ooo = mine.reduce((a, s) => a + s.outOfOrder, 0);
  const dup = mine.reduce((a, s) => a + s.duplicated, 0);
  const samples = [...results.values()].flat().flatMap((s) => s.otherSamples).slice(0, 3);
  const frame = (c: Contender) => results.get(c)!.find((s) => s.sample)?.sample ?? '';
  return [
    `Two Parley processes (compiled, NODE_ENV=production) sharing ${bus.name}, ${SUBSCRIBERS} roomEvents subscribers of one room`,
    '(the poster and 999 other participants, one graphql-ws socket each, half on each instance), one poster posting through',
    `the first instance's postMessage over HTTP, open loop (at most 64 posts in flight), ${STEP_MS / 1000} s per step. Floor: two`,
    `relay processes (bench/kit/fanout/relay-floor.ts) each subscribed to one channel of ${bus.name}, sending each published payload to each of`,
    'its sockets as the graphql-ws `next` frame Parley sends for it; its poster publishes the same payloads to that bus at the',
    'same rates. Subscribers live in two processes per contender (bench/kit/fanout/clients.ts, one code path for both), which',
    `read each frame with indexOf. Each contender first runs one unreported step at ${WARM_STEP_RATE} posts/s (warm-up). Contenders`,
    'then alternate step by step (Parley at a rate, then the relay at it); each climbs past its latency knee until its',
    'deliveries stop rising or it loses events. "Parley, delivery alone" is the same two',
    "instances and sockets, with each event published straight to the room's Redis channel as postMessage publishes it",
    '(same JSON, same channel) and nothing posted: what the delivery costs without the posts beside it, on the same machine.',
    '',
    'deliveries/s: distinct (post, socket) deliveries over the span from the first post of the step to the last receipt.',
    'Latency: receipt (subscriber process) minus send (poster, just before the request or PUBLISH), on the shared monotonic',
    "clock; Parley's includes the post's own write (post p50: the mutation's answer time), the relay's does not. Lost: posts",
    'answered OK but missing on a socket after draining (all in, or nothing new for 2 s, at most 60 s). Out of order: a',
    'socket got a message whose id sorts before one it already had (the feed promises history order; poster send order is',
    'not a promise: concurrent posts commit in any order). On this 2-core machine, shared with other benchmarks, the',
    'clients, servers, Cassandra, Redis and poster all compete for CPU: absolute figures are noisy, ratios less so.',
    '',
    'Cores: CPU seconds per second of the step (from /proc) of the contender\'s two server processes, of its two subscriber',
    'processes, and of the Cassandra node (2 cores in all on this machine).',
    '',
    '| contender | posts/s offered | posted/s | post p50 ms | deliveries/s | Parley/relay | p50 ms | p99 ms | lost | dup | out of order | failed posts | closed / other frames | servers, cores | subscribers, cores | Cassandra, cores |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Knee. Parley: ${knee(parley)}.`,
    `Parley, delivery alone: ${knee(deliveryOnly)}.`,
    `Relay floor: ${knee(relay)}.`,
    '',
    `Peak deliveries/s without losses: Parley ${f(peak(parley))}, relay floor ${f(peak(relay))}, ratio ${f(peak(parley) / peak(relay), 2)}`,
    `(target ≥ 0.8: ${peak(parley) >= 0.8 * peak(relay) ? 'met' : 'not met'}); Parley's delivery alone ${f(peak(deliveryOnly))}, ratio ${f(peak(deliveryOnly) / peak(relay), 2)}.`,
    `Within p99 ≤ ${KNEE_P99_MS} ms: Parley ${f(withinBound(parley))}, delivery alone ${f(withinBound(deliveryOnly))}, relay floor ${f(withinBound(relay))}. Parley over all its`,
    `steps: ${lost} lost, ${dup} duplicated, ${ooo} out of order (target 0 lost or out of order per room: ${lost + ooo === 0 ? 'met' : 'not met'}).`,
    '',
    `Frames as received (one each): Parley ${Buffer.byteLength(frame(parley))} bytes, relay ${Buffer.byteLength(frame(relay))} bytes.`,
    '',
    `    ${frame(parley)}`,
    `    ${frame(relay)}`,
    ...(samples.length ? ['', 'Frames that were not posts (first few):', '', ...samples.map((s) => `    ${s}`)] : []),
    '',
    `Time: setup (instances, 1,000 sign-ups and joins, sockets) ${f(time.setupMs / 1000)} s, ramp ${f(time.rampMs / 1000)} s, total ${f(time.totalMs / 1000)} s.`,
    '',
    `What bounds Parley's latency: persisting the posts, on a machine it shares with the Cassandra node. Its delivery alone (the`,
    `same instances and sockets, no posts) peaks at ${f(peak(deliveryOnly))} deliveries/s, ${f(peak(deliveryOnly) / peak(relay), 2)} of the relay's, and stays`,
    `within p99 ≤ ${KNEE_P99_MS} ms up to ${f(withinBound(deliveryOnly))}. With the posts written and served, at its peak step (${peakStep(parley).rate} posts/s offered)`,
    `the Cassandra node kept ${f(peakStep(parley).cores.cassandra, 2)} cores busy, Parley's instances ${f(peakStep(parley).cores.servers, 2)} and its subscribers ${f(peakStep(parley).cores.clients, 2)}, of 2;`,
    `during the relay's steps the node idles (${f(Math.max(...results.get(relay)!.map((x) => x.cores.cassandra)), 2)} cores at most).`,
    ...(bus.name === ONE_REDIS ? ONE_REDIS_HISTORY : []),
  ].join('\n');
}

/** How the one-Redis run's figures came to be: earlier runs, commits and profiles. */
const ONE_REDIS_HISTORY = [
    '',
    "What bounded Parley's peak before commit c2bcfc2: a room's publishes were sent one at a time, each waiting for Redis's",
    'answer to the one before (src/resolvers/rooms/live/feed.ts, RoomSequencer), so a room got at most one event per round trip,',
    "and the posting instance's round trips waited behind its own deliveries (500 frames per event): about 100 events a",
    'second on a busy instance, whatever Cassandra allowed. Now a turn waits for the earlier turns to be sent, not answered',
    "(Redis runs one connection's commands in order, so the room's order holds; test/rooms/live/live.test.ts checks 200",
    'concurrent posts arrive in history order on another instance). Two runs of this bench back to back on 2026-11-26',
    '(03:24 and 03:28, a slow day of the machine: one scrypt 166-175 ms) measured the change: before, Parley peaked at',
    '59,350 against the relay\'s 111,349 (0.53), at 80 posts/s offered with 65 posted a second, post p50 916 ms, falling',
    'to 55 posted at 160; after, 226,861 against 109,097 (2.08), 236 posted a second at 320 offered, post p50 210 ms, and',
    'at 80 posts/s post p50 62 ms and p99 187 ms against 916 and 1,391 before.',
    '',
    'At 160 posts/s (`npm run bench:profile fanout 160`, 2026-11-25, 10 s per step, not part of this run) the node was the',
    'busiest process on the machine, 5.34 CPU s of the 10 s step (3.3 ms per post, three requests each: the room\'s slice of',
    'participants, the author, the logged batch of the message and its author\'s copy), and Parley served 134,689',
    'deliveries/s against the relay\'s 141,792 at the same rate. Delivery itself is no longer what bounds Parley: frames',
    'written to a socket in one turn of the event loop leave in one system call (src/server/live/turn-writes.ts), where the relay',
    'writes each frame as ws.send does, one system call each; so its delivery alone climbs past the relay\'s peak.',
    '',
    'Where the node\'s time goes, from `npm run bench:profile fanout 40` (2026-11-25, 10 s per step, CPU time from /proc, not part of this',
    "run): at 40 posts/s the node spent 3.9-4.4 CPU s per 10 s step, 10 ms per post, against 0.6-2 ms per post when the",
    'same posts came in bursts; a paced poster alone (no subscribers) measured 23, 17, 10 and 5 ms per post at 20, 40, 80',
    "and 160 posts/s: 0.46, 0.67, 0.83 and 0.82 cores. perf of the node at 40 posts/s: 54 % of its samples in",
    "finish_task_switch, its request stages' workers parking and waking between requests (Cassandra's shared executor",
    'pool sleep-spins in steps of tens of µs before a worker sleeps; no setting of 5.0 changes it, and fewer worker threads',
    '(concurrent_reads and _writes 4, native_transport_max_threads 8) measured worse, 13-18 ms per post). The other cores',
    "pay for it too: over Parley's step at 40 posts/s each instance spent 2.3-2.4 s more in socket writes (writeBuffer)",
    'than over its delivery alone at the same rate, the same frames to the same sockets, on both instances, the one that',
    'serves no post included: the writes wake subscriber processes on cores Cassandra keeps busy. Per post, the posting',
    "instance's own work beyond delivery is about 2 ms of CPU at 40 posts/s (0.3 ms at full load in bench/results/requests.md).",
    '',
    'Before, peak Parley against relay: 33,173 against 142,744 (0.23), p99 ≤ 100 ms up to 20 posts/s, with an execution',
    'and a JSON.stringify per subscriber (run of 2026-11-23T03:17); 51,842 against 215,953 (0.24) once each event was',
    'executed once per instance and document (src/server/live/shared-execution.ts) and its payload serialized once',
    "(src/server/live/shared-frames.ts) (2026-11-23T09:06, commit 2526c0e); 74,298 against 171,851 (0.43) once each event went",
    "straight to each subscriber's socket (src/pubsub/pubsub.ts's DirectConsumer, the sink in src/server/live/websocket.ts)",
    "without a promise or iterator step per subscriber (2026-11-25T00:09, commit bffdb2c). Since then: each result's",
    'whole WebSocket frame is encoded once per operation id and written as it is (one write of ready bytes per socket,',
    "where ws.send measured, encoded and framed the text for each), and a post reads only the poster's own entries of the",
    "room's participants (a slice of the set) instead of all 1,000 of them. Per delivery, Parley's delivery alone now costs",
    "9.1-11.0 µs of CPU per instance against a relay process's 7.5-8.2 (two steps of each at 40 posts/s in one trial run, 2026-11-25, no profiler).",
    'Then, on 2026-11-25 (a faster day of this machine): 73,364 against 122,199 (0.60; delivery alone 90,383, 0.74) in a',
    'trial run before turn writes; with them, trials at 107,744 against 154,202 (0.70; delivery alone 318,556, 2.07)',
    'uncorking after each callback (process.nextTick) and 118,692 against 163,133 (0.73) uncorking once the turn has read',
    'its input (setImmediate); then six runs of this bench, at commits 63b4813, a9c4a74, 8420d84 and 051fc81: 83,841',
    'against 156,779 (0.53; the first scenario of a whole npm run bench, its Cassandra node busier throughout: 0.49 cores',
    'at 40 posts/s against 0.35-0.38 in the others), 137,475 against 159,793 (0.86), 116,753 against 139,053 (0.84),',
    '149,024 against 186,138 (0.80), 189,509 against 180,200 (1.05) and 189,396 against 190,128 (1.00). From run to run',
    'Parley\'s peak moves with how many posts the saturated machine still serves (87 to 160 a second at 160 offered), the',
    'relay\'s with the machine alone. Later that day the machine slowed (one scrypt at the login cost of then, N=2^17, r=8, p=1, took 660-900 ms, about',
    '250 before): 42,744 against 76,457 (0.56; a node started two minutes before, no warm-up step yet), 47,735 against',
    '67,220 (0.71), 37,318 against 65,970 (0.57, at commit 45aba98) and, at 19:21 (commit 09038a0, one scrypt 260-279',
    'ms at the then new default N=2^14, r=8, p=5), 40,493 against 59,951 (0.68): Parley posted at most 40-53 posts a',
    'second, its Cassandra node 0.37-0.60 cores busy (8-13 ms of node CPU per post), while its delivery alone reached',
    '156,025 to 298,204 (2.3 to 4.2 times the relay\'s peak). At 20:21 (commit 826f7ae): 53,280 against 58,991 (0.90),',
    'delivery alone 159,089 (2.70). At 22:22 (commit 4770dc2, a whole npm run bench): 72,144 against 85,950 (0.84),',
    'delivery alone 289,280 (3.37). The next whole run (2026-11-26T01:07, commit 4cec9e5, one scrypt 115 ms: a fast',
    'day of the machine): 101,848 against 148,664 (0.69), Parley posting 105 a second at 160 offered (post p50 614 ms);',
    'within p99 ≤ 100 ms the two delivered alike in that run: 79,908 against 80,075 at 80 posts/s. In all of these runs',
    "Parley's posts were held by the one-at-a-time publishes described above (64 posts in flight over 614 ms is 104 a second).",
    'Whole runs from commit 5610398 on have them pipelined: at 5610398 (2026-11-26T03:32, one scrypt 164-175 ms) 245,430',
    "against 107,444 (2.28), Parley posting 257 a second at 320 offered (post p50 208 ms); at 82c5006 (04:24) 225,603",
    'against 95,911 (2.35), Parley posting 237 a second at 320 offered (post p50 200 ms); within p99 ≤ 100 ms 39,779',
    'against 40,105; at 71e1ad1 (06:07, one scrypt 159 ms) 223,767 against 94,220 (2.37), Parley posting 232 a second',
    'at 320 offered (post p50 222 ms); within p99 ≤ 100 ms 40,008 against 79,930.',
    '',
    "Tried and not kept (2026-11-23T09:00): each result's frame written straight to the socket from the results, but",
    "still through every subscriber's own iterator chain, skipping only graphql-ws's loop (by its onOperation hook): peak",
    '57,627 deliveries/s against 211,142 (0.27), against 58,943 and 223,623 (0.26) without it: no change beyond noise.',
];
