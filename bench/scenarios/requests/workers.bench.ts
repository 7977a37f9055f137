/**
 * WEB_CONCURRENCY (issue 12): `npm start`'s compiled build run as one
 * instance and as 2 workers sharing the port (node:cluster), both with Redis
 * (the workers need it; the single instance gets it too, so only the count
 * differs), on the request scenarios that spend the most CPU in Parley.
 * Contenders alternate round by round after a warm-up each; the load
 * generator runs in this process, on the same 2 cores as the servers and
 * Cassandra, so a second worker can only take what the others leave.
 */
import { projectPath } from '../../../src/project-root.js';
import { benchEnv, median } from '../../kit/harness.js';
import { startChildServer, type ServerProcess } from '../../kit/servers/server-process.js';
import { PRODUCTION_ENV } from '../../kit/remote-parley.js';
import { seedRequestScenarios } from '../../kit/requests/scenarios.js';
import { graphqlRequest, loadRequest, type LoadSample } from '../../kit/requests/load.js';
import { freePort } from '../../../test/testkit/free-port.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const COUNTS = [1, 2] as const;
const SCENARIOS = ['history', 'meRooms', 'postMessage'] as const;
const CONNECTIONS = 64;

/** dist/src/main.js as `npm start` runs it; ready once each of its `workers` instances logs that it listens. */
async function startMain(workers: number): Promise<ServerProcess> {
  const env = await benchEnv({ ...PRODUCTION_ENV, REDIS_URL, WEB_CONCURRENCY: String(workers), PORT: String(await freePort()), LOG_LEVEL: 'info' });
  let listening = 0;
  return startChildServer(projectPath('dist', 'src', 'main.js'), env, [], (line) => {
    if (!line.includes('"Parley is listening"') || ++listening < workers) return undefined;
    return (JSON.parse(line) as { url: string }).url.replace(/\/graphql$/, '');
  });
}

export default async function run(): Promise<string> {
  const servers: ServerProcess[] = [];
  try {
    for (const n of COUNTS) servers.push(await startMain(n));
    const scenarios = await seedRequestScenarios(servers[0]!.url);
    const rows: string[] = [];
    for (const name of SCENARIOS) {
      const s = scenarios[name]!;
      console.log(`  ${name} at ${CONNECTIONS}`);
      for (const server of servers) await loadRequest(graphqlRequest(server.url, s), CONNECTIONS, 2);
      const samples: LoadSample[][] = servers.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, server] of servers.entries()) samples[i]!.push(await loadRequest(graphqlRequest(server.url, s), CONNECTIONS, SECONDS));
      }
      const [one, two] = samples.map((xs) => ({ rps: median(xs.map((x) => x.rps)), p99: median(xs.map((x) => x.p99)), errors: xs.reduce((n, x) => n + x.errors, 0) }));
      rows.push(`| ${s.title}, ${CONNECTIONS} | ${one!.rps.toFixed(0)} / ${one!.p99} | ${two!.rps.toFixed(0)} / ${two!.p99} | ${(two!.rps / one!.rps).toFixed(2)} | ${one!.errors + two!.errors} |`);
    }
    return [
      `Each cell is req/s / p99 ms: the median over ${ROUNDS} alternating rounds of ${SECONDS} s per contender, after a 2 s warm-up each.`,
      'Both contenders are `npm start` (dist/src/main.js, NODE_ENV=production, metrics off) with REDIS_URL set; one runs',
      'WEB_CONCURRENCY=1, the other WEB_CONCURRENCY=2 (a primary and two workers on one port). autocannon runs in the bench',
      'process. The machine has 2 cores, shared by the workers, the Cassandra node, Redis and the load generator.',
      '',
      '| scenario, connections | 1 instance | 2 workers | 2 workers / 1 | errors |',
      '|---|---|---|---|---|',
      ...rows,
    ].join('\n');
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
