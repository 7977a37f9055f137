/**
 * A history page of 50 with authors, Parley against its floor (issue 12): the
 * same JWT check and CQL reads in a plain node:http server (bench/floor-server.ts).
 * Each contender is a process of its own; autocannon runs them in alternating
 * rounds at concurrency 16 and 64, so both see the same machine.
 */
import autocannon from 'autocannon';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { startFloorProcess } from './floor-server.js';
import { HISTORY_PAGE_QUERY as QUERY, PRODUCTION_ENV, remoteApp, seedHistoryPage } from './scenarios.js';
import { median } from './harness.js';
import { gql } from '../test/testkit/http.js';

const ROUNDS = 3;
const SECONDS = 6;

interface Sample {
  rps: number;
  p99: number;
  errors: number;
}

async function load(opts: autocannon.Options): Promise<Sample> {
  const r = await autocannon({ ...opts, duration: SECONDS });
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

export default async function run(): Promise<string> {
  const servers: ServerProcess[] = [];
  try {
    const parley = await startServerProcess(PRODUCTION_ENV);
    servers.push(parley);
    const floor = await startFloorProcess();
    servers.push(floor);

    const { token, name } = await seedHistoryPage(parley.url);
    const contenders = {
      parley: {
        url: `${parley.url}/graphql`,
        method: 'POST' as const,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: QUERY, variables: { name } }),
      },
      floor: { url: `${floor.url}/history?room=${encodeURIComponent(name)}`, headers: { authorization: `Bearer ${token}` } },
    };
    // Both answer the page: 50 messages each.
    const floorPage = (await (await fetch(contenders.floor.url, { headers: contenders.floor.headers })).json()) as { data: { room: { messages: { edges: unknown[] } } } };
    const parleyPage = (await gql(remoteApp(parley.url), QUERY, { name }, token)).data as { room: { messages: { edges: unknown[] } } } | undefined;
    if (floorPage.data.room.messages.edges.length !== 50 || parleyPage?.room.messages.edges.length !== 50) throw new Error('a contender does not answer the page');

    const rows: string[] = [];
    for (const connections of [16, 64]) {
      for (const c of Object.values(contenders)) await load({ ...c, connections, duration: 2 });
      const samples: Record<string, Sample[]> = { parley: [], floor: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const [key, c] of Object.entries(contenders)) samples[key]!.push(await load({ ...c, connections }));
      }
      const p = { rps: median(samples.parley!.map((s) => s.rps)), p99: median(samples.parley!.map((s) => s.p99)) };
      const f = { rps: median(samples.floor!.map((s) => s.rps)), p99: median(samples.floor!.map((s) => s.p99)) };
      const errors = [...samples.parley!, ...samples.floor!].reduce((n, s) => n + s.errors, 0);
      rows.push(`| ${connections} | ${p.rps.toFixed(0)} | ${p.p99} | ${f.rps.toFixed(0)} | ${f.p99} | ${(p.rps / f.rps).toFixed(2)} | ${(p.p99 / f.p99).toFixed(2)} | ${errors} |`);
    }
    return [
      '`room(name) { messages(first: 50) { edges { node { id content author { login } } } } }` with a token, on a room',
      `of 120 messages in one day bucket. Parley (the app factory in a process of its own, compiled, NODE_ENV=production, METRICS=off) against`,
      'the floor (bench/floor-server.ts: node:http, the same JWT check and store calls, JSON out, also its own process); autocannon,',
      `${ROUNDS} alternating rounds of ${SECONDS} s per contender after a 2 s warm-up each; medians over the rounds.`,
      '',
      '| connections | Parley req/s | Parley p99 ms | floor req/s | floor p99 ms | req/s vs floor | p99 vs floor | errors |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      'Before issue 12 (commit d3317f8: sources through tsx, NODE_ENV=test, same machine and method): 881 and 939 req/s at',
      '16 and 64 connections, p99 50 and 127 ms, against the floor\'s 2,935 and 2,645 req/s: 0.30× and 0.36×. Since: a',
      'compiled build, a verified-token cache, cursors encoded only when selected, stored people as a class, and',
      'NODE_ENV=production in the process environment. graphql-jit (@envelop/graphql-jit 11.2.1) was measured once in',
      'this bench at 1,059 and 1,288 req/s (0.49× and 0.50×, against 0.45× and 0.42× without, same session) but',
      'not adopted: 8 tests failed with it (variable coercion messages and field paths, the participants complexity',
      'bound, subscriptions over graphql-ws).',
    ].join('\n');
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
