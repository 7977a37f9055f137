/**
 * What idle subscriptions cost (issue 12): one Parley process (compiled,
 * production mode) with 0, 1,000 and 5,000 roomEvents subscriptions open, each
 * on a graphql-ws socket of its own as each client would hold one, and nothing
 * published. Memory is read from the server's own /metrics (prom-client's
 * process and heap gauges), once its subscription gauge shows every one live.
 */
import type { Client } from 'graphql-ws';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { PRODUCTION_ENV, remoteApp } from './scenarios.js';
import { median } from './harness.js';
import { RoomEventsDocument } from '../test/generated/graphql.js';
import { eventually } from '../test/testkit/poll.js';
import { roomWith } from '../test/testkit/rooms.js';
import { signUp } from '../test/testkit/users.js';
import { subscribe, wsClient } from '../test/testkit/ws.js';

const LEVELS = [0, 1_000, 5_000];
const METRICS_TOKEN = 'bench-metrics-token';
const SAMPLES = 5;

async function metrics(server: ServerProcess): Promise<Map<string, number>> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m) values.set(m[1]!, (values.get(m[1]!) ?? 0) + Number(m[3]));
  }
  return values;
}

const mb = (bytes: number) => bytes / 1024 / 1024;

export default async function run(): Promise<string> {
  const server = await startServerProcess({ ...PRODUCTION_ENV, METRICS: 'on', METRICS_TOKEN });
  const clients: Client[] = [];
  try {
    const app = remoteApp(server.url);
    const user = await signUp(app);
    const roomName = await roomWith(app, user);
    const subscribeOne = () => {
      const client = wsClient(app, user.token);
      subscribe(client, RoomEventsDocument, { roomName });
      clients.push(client);
    };
    const rows: string[] = [];
    let base: { rss: number; heap: number } | undefined;
    for (const level of LEVELS) {
      while (clients.length < level) {
        for (let i = 0; i < 250 && clients.length < level; i++) subscribeOne();
        const opened = clients.length;
        await eventually(async () => (await metrics(server)).get('parley_subscriptions_active') === opened, {
          what: `${opened} live subscriptions`,
          timeoutMs: 120_000,
          intervalMs: 250,
        });
      }
      const rss: number[] = [];
      const heap: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const m = await metrics(server);
        rss.push(m.get('process_resident_memory_bytes')!);
        heap.push(m.get('nodejs_heap_size_used_bytes')!);
        await new Promise((r) => setTimeout(r, 1000));
      }
      const at = { rss: median(rss), heap: median(heap) };
      base ??= at;
      const per1000 = (x: number, b: number) => (level === 0 ? '–' : ((mb(x) - mb(b)) / (level / 1000)).toFixed(1));
      rows.push(`| ${level} | ${mb(at.rss).toFixed(1)} | ${mb(at.heap).toFixed(1)} | ${per1000(at.rss, base.rss)} | ${per1000(at.heap, base.heap)} |`);
    }
    return [
      'One Parley process (compiled, NODE_ENV=production), roomEvents subscriptions on one room, one graphql-ws socket each',
      `(clients in the benchmark's process), nothing published. RSS and used heap from the server's /metrics, median of ${SAMPLES}`,
      'samples a second apart once parley_subscriptions_active shows every subscription live. Target (issue 12): ≤ 20 MB per 1,000.',
      '',
      '| idle subscriptions | RSS MB | heap used MB | RSS MB per 1,000 | heap MB per 1,000 |',
      '|---|---|---|---|---|',
      ...rows,
      '',
      'Where it goes (a one-off heap snapshot of the same setup at 1,000, 2026-11-23, not part of this run): per subscription',
      'about 8 async generators with their next/return/throw closures, 55 closure contexts, 69 closures, 3 DataLoaders (the',
      "socket's context) and the socket itself; no single object dominates. The layers are the async iterators each",
      'subscription is wrapped in (pub/sub stream, feed gap marker, metering, session end, Yoga and graphql-js result',
      'mapping). Not yet reduced: that is the remaining work on this target. The same snapshot found the GraphiQL bundle held',
      'as a 28 MB string in every process, production included; it is now loaded on first use (baseline RSS 187 → 143 MB).',
    ].join('\n');
  } finally {
    await Promise.all(clients.map((c) => c.dispose()));
    await server.stop();
  }
}
