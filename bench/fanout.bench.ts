/**
 * Live fan-out (issue 12): two Parley instances (compiled, production mode)
 * sharing Redis, 1,000 graphql-ws subscribers of one room's roomEvents split
 * over them, and one poster whose rate rises step by step. Beside it, the
 * floor: a minimal WebSocket relay (bench/relay-floor.ts, two processes) of
 * the same frames through the same Redis to the same number of sockets, read
 * by the same client code. The contenders alternate step by step (Parley at a
 * rate, then the relay at that rate), so machine noise falls on both alike.
 * A contender climbs past its latency knee until its deliveries stop rising
 * or it loses events: further on, its backlog would only spill into the next
 * step (and Parley ends a subscription that falls 1,000 events behind).
 */
import { setUpFanout, SUBSCRIBERS } from './fanout-setup.js';
import { runStep, warmUp, type Contender, type StepResult } from './fanout-ramp.js';

const RATES = [2, 5, 10, 20, 40, 80, 160, 320];
const STEP_MS = 5_000;
const WARM_UP_MAX = 300;
const KNEE_P99_MS = 100;
/** "Deliveries stop rising": a step whose rate doubled gained less than this. */
const RISE = 1.1;

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

export default async function run(): Promise<string> {
  const began = Date.now();
  // Parley's two contenders share its sockets, so their sequence numbers follow one another.
  const maxSeq = 2 * (2 * WARM_UP_MAX + RATES.reduce((a, r) => a + (r * STEP_MS) / 1000, 0)) + 1;
  const stage = await setUpFanout(maxSeq);
  try {
    const { parley, deliveryOnly, relay } = stage;
    const setupMs = Date.now() - began;
    const contenders = [parley, deliveryOnly, relay];
    // The next sequence number of each set of sockets.
    const next = new Map<Contender['clients'], number>();
    for (const c of contenders) next.set(c.clients, await warmUp(c, next.get(c.clients) ?? 0, WARM_UP_MAX));
    const results = new Map<Contender, StepResult[]>(contenders.map((c) => [c, []]));
    const knees = new Map<Contender, Knees>(contenders.map((c) => [c, {}]));
    const rampBegan = Date.now();
    for (const rate of RATES) {
      for (const c of contenders) {
        const knee = knees.get(c)!;
        if (knee.saturated) continue;
        const seq0 = next.get(c.clients)!;
        const step = await runStep(c, rate, STEP_MS, seq0);
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
    return report(results, knees, parley, deliveryOnly, relay, { setupMs, rampMs: Date.now() - rampBegan, totalMs: Date.now() - began });
  } finally {
    await stage.stop();
  }
}

function report(
  results: Map<Contender, StepResult[]>,
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
      rows.push(`| ${c.name} | ${s.rate} | ${f(s.postedPerSec, 1)} | ${f(s.postP50, 1)} | ${f(s.deliveriesPerSec)} | ${ratio} | ${f(s.p50, 1)} | ${f(s.p99, 1)} | ${s.lost} | ${s.duplicated} | ${s.outOfOrder} | ${s.failedPosts} | ${closed}${s.other ? ` ${s.other} other` : ''} |`);
    }
  }
  const best = (c: Contender, ok: (s: StepResult) => boolean) => Math.max(0, ...results.get(c)!.filter(ok).map((s) => s.deliveriesPerSec));
  const peak = (c: Contender) => best(c, (s) => s.lost === 0);
  const withinBound = (c: Contender) => best(c, (s) => s.lost === 0 && s.p99 <= KNEE_P99_MS);
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
    `Two Parley processes (compiled, NODE_ENV=production) sharing one Redis, ${SUBSCRIBERS} roomEvents subscribers of one room`,
    '(the poster and 999 other participants, one graphql-ws socket each, half on each instance), one poster posting through',
    `the first instance's postMessage over HTTP, open loop (at most 64 posts in flight), ${STEP_MS / 1000} s per step. Floor: two`,
    'relay processes (bench/relay-floor.ts) each subscribed to one Redis channel, sending each published payload to each of',
    'its sockets as the graphql-ws `next` frame Parley sends for it; its poster publishes the same payloads to Redis at the',
    'same rates. Subscribers live in two processes per contender (bench/fanout-clients.ts, one code path for both), which',
    'read each frame with indexOf. Contenders alternate step by step (Parley at a rate, then the relay at it); each climbs',
    'past its latency knee until its deliveries stop rising or it loses events. "Parley, delivery alone" is the same two',
    "instances and sockets, with each event published straight to the room's Redis channel as postMessage publishes it",
    '(same JSON, same channel) and nothing posted: what the delivery costs without the posts beside it, on the same machine.',
    '',
    'deliveries/s: distinct (post, socket) deliveries over the span from the first post of the step to the last receipt.',
    'Latency: receipt (subscriber process) minus send (poster, just before the request or PUBLISH), on the shared monotonic',
    "clock; Parley's includes the post's own write (post p50: the mutation's answer time), the relay's does not. Lost: posts",
    'answered OK but missing on a socket after draining (all in, or nothing new for 2 s, at most 20 s). Out of order: a',
    'socket got a message whose id sorts before one it already had (the feed promises history order; poster send order is',
    'not a promise: concurrent posts commit in any order). On this 2-core machine, shared with other benchmarks, the',
    'clients, servers, Cassandra, Redis and poster all compete for CPU: absolute figures are noisy, ratios less so.',
    '',
    '| contender | posts/s offered | posted/s | post p50 ms | deliveries/s | Parley/relay | p50 ms | p99 ms | lost | dup | out of order | failed posts | closed / other frames |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
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
    'Before each event was executed once per instance and document (src/server/shared-execution.ts) and each payload',
    'serialized once (src/server/shared-frames.ts), with an execution and a JSON.stringify per subscriber: Parley peak',
    '33,173 deliveries/s against the relay floor\'s 142,744 (ratio 0.23), p99 ≤ 100 ms up to 20 posts/s (run of',
    '2026-11-23T03:17). After that and before results went straight to the sockets: peak 51,842 against 215,953 (0.24),',
    'within p99 ≤ 100 ms 20,086 against 159,761 (run of 2026-11-23T09:06, commit 2526c0e).',
    '',
    "Since then an event goes straight to each graphql-ws socket (src/pubsub/pubsub.ts's DirectConsumer, the sink in",
    'src/server/websocket.ts): while a subscriber\'s reader waits and nothing is queued for it, the pub/sub hands the event',
    "to its stream, the feed's rules run, and the shared result's frame is written at once; before, each subscriber took",
    "each event through its own promise chain (the stream's next(), the shared-result, session and envelop layers,",
    "graphql-ws's for-await and emit). A trial run of 2026-11-24: peak 88,093 against 181,384 (0.49).",
    '',
    "What bounds Parley now: CPU per delivery. From each process's CPU time over a step (trial runs of 2026-11-24 at 40 and",
    '60 posts/s): the instance without the poster 12-13 µs per delivery, the posting instance 15-16 µs, a relay process',
    '6-8 µs. perf (cpu-clock) of the instance without the poster and of a relay over 4 s at 60 posts/s, per delivery:',
    'kernel 6.3 µs against the relay\'s 4.8 (a socket write on loopback runs the receiver\'s TCP path too, and Parley\'s',
    'processes are switched out more often: Cassandra and the posting instance want the same 2 cores), Node\'s native code',
    '2.7 against 1.3, JavaScript 2.3 against 0.8. What JavaScript still runs per subscriber and event: the feed\'s rules (own',
    'typing, end of the feed, the access re-check window), the session check, the shared result\'s lookup, the frame and',
    "the socket's byte bound. The posting instance also runs each postMessage: 780 µs of CPU each in this room of 1,000",
    "(240 in a room of 10), the room's 1,000 participants read and decoded on every post. Past about 70 posts/s the posting",
    'instance is busy all the time and its posts queue (post p50 near a second).',
    '',
    "Tried and not kept (2026-11-23T09:00): each result's frame written straight to the socket from the results, but",
    "still through every subscriber's own iterator chain, skipping only graphql-ws's loop (by its onOperation hook): peak",
    "57,627 deliveries/s against 211,142 (0.27), against 58,943 and 223,623 (0.26) without it: no change beyond noise.",
  ].join('\n');
}
