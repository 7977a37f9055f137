/**
 * One step of the fan-out ramp, the same for Parley and its relay floor: a
 * poster sends at a fixed rate, open loop (a post is sent when due, not when
 * the previous one returned, as independent users would), each post carrying
 * its sequence number and send time; then the subscriber processes are
 * drained and asked what every socket received.
 */
import { MARK, BIN_MS, clockMs, type Collected, type FanoutClients } from './clients.js';

export interface Contender {
  name: string;
  /** The processes that deliver (Parley's instances, or the relay's). */
  serverPids: number[];
  clients: FanoutClients[];
  /** Sockets over all client processes. */
  sockets: number;
  /** Sends one post; resolves true once the server (or Redis) took it. */
  post(content: string): Promise<boolean>;
}

export interface StepResult {
  rate: number;
  posts: number;
  /** Posts the poster actually managed per second (below `rate` when it was held back). */
  postedPerSec: number;
  failedPosts: number;
  /** Median time for a post to be answered (Parley: the mutation, Cassandra write included; relay: PUBLISH). */
  postP50: number;
  delivered: number;
  deliveriesPerSec: number;
  p50: number;
  p99: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  /** Sockets the server closed, by code; frames that were not posts (errors, completes), with samples. */
  closed: Record<string, number>;
  other: number;
  otherSamples: string[];
  sample: string;
}

/** Posts stop waiting for answers beyond this many in flight (a stalled server is then offered less). */
const MAX_IN_FLIGHT = 64;
/** Draining ends when every delivery is in, or nothing arrived for this long... */
const QUIET_MS = 2_000;
/**
 * ...or at the latest after this long. Long enough that an overloaded contender
 * still delivering its backlog is reported late (its p99), not lossy: with 20 s,
 * 1,600 posts to 1,000 sockets delivered at 49,000/s on a slow day counted
 * 375,889 deliveries still on their way as lost.
 */
const DRAIN_MAX_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A chat message of ordinary length, after the marker the clients read. */
const content = (seq: number, sentAt: number) => `${MARK}${seq}:${sentAt.toFixed(3)}: a line of chat of ordinary length, as people write them`;

interface Paced {
  posts: number;
  failed: number[];
  firstSend: number;
  postedPerSec: number;
  postP50: number;
}

/** `count` posts at `rate` per second with sequence numbers from `seq0`. */
async function pace(contender: Contender, rate: number, count: number, seq0: number): Promise<Paced> {
  const t0 = performance.now();
  const inFlight = new Set<Promise<void>>();
  const failed: number[] = [];
  const answeredMs: number[] = [];
  let firstSend = 0;
  let lastSend = 0;
  for (let i = 0; i < count; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait >= 1) await sleep(wait);
    while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    const seq = seq0 + i;
    const sentAt = clockMs();
    if (i === 0) firstSend = sentAt;
    lastSend = sentAt;
    const p: Promise<void> = contender
      .post(content(seq, sentAt))
      .catch(() => false)
      .then((ok) => {
        answeredMs.push(clockMs() - sentAt);
        if (!ok) failed.push(seq);
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  const postedPerSec = count > 1 ? ((count - 1) * 1000) / (lastSend - firstSend) : rate;
  answeredMs.sort((a, b) => a - b);
  return { posts: count, failed, firstSend, postedPerSec, postP50: answeredMs[Math.floor(answeredMs.length / 2)] ?? NaN };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Waits until every socket has every post, or deliveries stop coming. */
async function drain(contender: Contender, expected: number): Promise<void> {
  const deadline = Date.now() + DRAIN_MAX_MS;
  let last = -1;
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    const received = sum((await Promise.all(contender.clients.map((c) => c.counts()))).map((c) => c.received));
    if (received >= expected) return;
    if (received !== last) {
      last = received;
      quietSince = Date.now();
    } else if (Date.now() - quietSince > QUIET_MS) return;
    await sleep(200);
  }
}

function percentile(hist: Map<number, number>, total: number, p: number): number {
  if (total === 0) return NaN;
  const target = Math.ceil(p * total);
  let seen = 0;
  for (const bin of [...hist.keys()].sort((a, b) => a - b)) {
    seen += hist.get(bin)!;
    if (seen >= target) return bin * BIN_MS;
  }
  return NaN;
}

function merge(parts: Collected[]) {
  const hist = new Map<number, number>();
  const closed: Record<string, number> = {};
  for (const part of parts) {
    for (const [bin, n] of part.hist) hist.set(bin, (hist.get(bin) ?? 0) + n);
    for (const [code, n] of Object.entries(part.closed)) closed[code] = (closed[code] ?? 0) + n;
  }
  const samples = sum([...hist.values()]);
  return {
    delivered: sum(parts.map((p) => p.delivered)),
    lost: sum(parts.map((p) => p.lost)),
    duplicated: sum(parts.map((p) => p.duplicated)),
    outOfOrder: sum(parts.map((p) => p.outOfOrder)),
    other: sum(parts.map((p) => p.other)),
    otherSamples: parts.flatMap((p) => p.otherSamples).slice(0, 3),
    sample: parts.find((p) => p.sample)?.sample ?? '',
    lastReceipt: Math.max(...parts.map((p) => p.lastReceipt)),
    p50: percentile(hist, samples, 0.5),
    p99: percentile(hist, samples, 0.99),
    closed,
  };
}

/** Runs one step of `durationMs` at `rate` posts/s from sequence number `seq0`; the next step starts at seq0 + result.posts. */
export async function runStep(contender: Contender, rate: number, durationMs: number, seq0: number): Promise<StepResult> {
  const paced = await pace(contender, rate, Math.round((rate * durationMs) / 1000), seq0);
  await drain(contender, (paced.posts - paced.failed.length) * contender.sockets);
  const m = merge(await Promise.all(contender.clients.map((c) => c.collect(seq0, seq0 + paced.posts, paced.failed))));
  // Over the span from the first post to the last receipt: a server that falls behind stretches it.
  const spanMs = m.lastReceipt - paced.firstSend;
  return {
    rate,
    posts: paced.posts,
    postedPerSec: paced.postedPerSec,
    failedPosts: paced.failed.length,
    postP50: paced.postP50,
    deliveriesPerSec: m.delivered > 0 && spanMs > 0 ? (m.delivered * 1000) / spanMs : 0,
    ...m,
  };
}

/**
 * Posts a few a second until every socket has received one (a subscription is
 * live only once the server has subscribed it to the channel, which no frame
 * announces), then clears what the clients recorded. Returns the next sequence number.
 */
export async function warmUp(contender: Contender, seq0: number, maxPosts: number): Promise<number> {
  let seq = seq0;
  for (;;) {
    const live = sum((await Promise.all(contender.clients.map((c) => c.counts()))).map((c) => c.live));
    if (live >= contender.sockets) break;
    if (seq - seq0 >= maxPosts) throw new Error(`${contender.name}: only ${live} of ${contender.sockets} subscriptions live after ${maxPosts} warm-up posts`);
    const paced = await pace(contender, 5, 1, seq);
    seq += paced.posts;
    await sleep(200);
  }
  await sleep(1_000);
  await Promise.all(contender.clients.map((c) => c.collect(seq0, seq, [])));
  return seq;
}
