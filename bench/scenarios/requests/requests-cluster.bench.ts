/**
 * What replication factor 3 costs: Parley and its floor (bench/kit/servers/floor-server.ts: the same use cases and CQL
 * without GraphQL) on the local single node (RF 1) and on the local three-node cluster (RF 3, LOCAL_QUORUM),
 * four processes side by side driven in alternating rounds. Per scenario: req/s and p99 of each, Parley/floor on
 * each topology, and the CPU per request of the server and of Cassandra (the one node, or the three). Starts the
 * cluster when it does not answer.
 */
import { CLUSTER_CQL_PORT, CLUSTER_HOSTS, clusterContactPoints, clusterNodePid, startCluster } from '../../../src/local-node/cluster.js';
import { cqlAnswers } from '../../../src/local-node/launcher.js';
import { startServerProcess, type ServerProcess } from '../../kit/servers/server-process.js';
import { startFloorProcess } from '../../kit/servers/floor-server.js';
import { requestFor } from '../../kit/requests/contenders.js';
import { seedRequestScenarios, type RequestScenario } from '../../kit/requests/scenarios.js';
import { PRODUCTION_ENV } from '../../kit/remote-parley.js';
import { loadRequest, type LoadSample } from '../../kit/requests/load.js';
import { cassandraPid, cpuUs } from '../../kit/profiles/process-cpu.js';
import { median } from '../../kit/harness.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = 16;
const SCENARIOS = ['history', 'postMessage', 'sendDirectMessage', 'conversations', 'meRooms'];
const CLUSTER_ENV = { CASSANDRA_CONTACT_POINTS: clusterContactPoints(), CASSANDRA_REPLICATION: 'datacenter1:3', CASSANDRA_KEYSPACE: 'parley_bench_rf3' };

type Topology = 'RF 1' | 'RF 3';
type Server = 'parley' | 'floor';
interface Contender {
  topology: Topology;
  server: Server;
  process: ServerProcess;
  cassandra: number[];
}
interface Measured extends LoadSample {
  serverCpuUs: number;
  cassandraCpuUs: number;
}

const totalCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuUs(pid).user + cpuUs(pid).system, 0);

async function run(c: Contender, s: RequestScenario, seconds = SECONDS): Promise<Measured> {
  const [server0, cassandra0] = [totalCpu([c.process.pid]), totalCpu(c.cassandra)];
  const sample = await loadRequest(requestFor(c.server, c.process.url, s), CONNECTIONS, seconds);
  const n = Math.max(1, sample.requests);
  return { ...sample, serverCpuUs: (totalCpu([c.process.pid]) - server0) / n, cassandraCpuUs: (totalCpu(c.cassandra) - cassandra0) / n };
}

/** Seeds a topology's keyspace through a Parley process of its own (and, for history rows, an app in this process). */
async function seed(env: Record<string, string>): Promise<Record<string, RequestScenario>> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const seeder = await startServerProcess({ ...PRODUCTION_ENV, ...env });
  try {
    return await seedRequestScenarios(seeder.url);
  } finally {
    await seeder.stop();
    process.env = saved;
  }
}

export default async function requestsCluster(): Promise<string> {
  const up = await Promise.all(CLUSTER_HOSTS.map((host) => cqlAnswers(host, CLUSTER_CQL_PORT)));
  if (!up.every(Boolean)) await startCluster();
  const scenarios: Record<Topology, Record<string, RequestScenario>> = { 'RF 1': await seed({}), 'RF 3': await seed(CLUSTER_ENV) };
  const nodePid = cassandraPid();
  const clusterPids = CLUSTER_HOSTS.map((_, i) => clusterNodePid(i)).filter((pid): pid is number => pid !== undefined);
  const contenders: Contender[] = [];
  try {
    for (const topology of ['RF 1', 'RF 3'] as const) {
      const env = { ...PRODUCTION_ENV, ...(topology === 'RF 3' ? CLUSTER_ENV : {}) };
      const cassandra = topology === 'RF 3' ? clusterPids : nodePid ? [nodePid] : [];
      contenders.push({ topology, server: 'parley', process: await startServerProcess(env), cassandra });
      contenders.push({ topology, server: 'floor', process: await startFloorProcess(env), cassandra });
    }
    const rows: string[] = [];
    const ratioLines: string[] = [];
    for (const name of SCENARIOS) {
      console.log(`  ${name}`);
      const samples = new Map<Contender, Measured[]>(contenders.map((c) => [c, []]));
      for (const c of contenders) await run(c, scenarios[c.topology][name]!, 2);
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < contenders.length; i++) {
          const c = contenders[(round + i) % contenders.length]!;
          const m = await run(c, scenarios[c.topology][name]!);
          console.log(`    ${c.server} ${c.topology}: ${m.rps.toFixed(0)} req/s, p99 ${m.p99} ms, server ${m.serverCpuUs.toFixed(0)} µs, Cassandra ${m.cassandraCpuUs.toFixed(0)} µs per request, ${m.errors} errors`);
          samples.get(c)!.push(m);
        }
      }
      const med = (c: Contender, pick: (m: Measured) => number) => median(samples.get(c)!.map(pick));
      const of = (topology: Topology, server: Server) => contenders.find((c) => c.topology === topology && c.server === server)!;
      for (const c of contenders) {
        const errors = samples.get(c)!.reduce((n, m) => n + m.errors, 0);
        rows.push(
          `| ${scenarios[c.topology][name]!.title} | ${c.topology} | ${c.server} | ${med(c, (m) => m.rps).toFixed(0)} | ${med(c, (m) => m.p99)} | ` +
            `${med(c, (m) => m.serverCpuUs).toFixed(0)} | ${med(c, (m) => m.cassandraCpuUs).toFixed(0)} | ${errors} |`,
        );
      }
      const rps = (t: Topology, s: Server) => med(of(t, s), (m) => m.rps);
      const p99 = (t: Topology) => med(of(t, 'parley'), (m) => m.p99);
      const cass = (t: Topology) => med(of(t, 'parley'), (m) => m.cassandraCpuUs);
      ratioLines.push(
        `| ${name} | ${(rps('RF 1', 'parley') / rps('RF 1', 'floor')).toFixed(2)} | ${(rps('RF 3', 'parley') / rps('RF 3', 'floor')).toFixed(2)} | ` +
          `${(rps('RF 3', 'parley') / rps('RF 1', 'parley')).toFixed(2)} | ${p99('RF 1')} → ${p99('RF 3')} | ${cass('RF 1').toFixed(0)} → ${cass('RF 3').toFixed(0)} |`,
      );
    }
    return [
      `Each row: the median over ${ROUNDS} alternating rounds of ${SECONDS} s at ${CONNECTIONS} connections (each round starting one contender`,
      'further on), after a 2 s warm-up each. RF 1: the local single node (keyspace parley_bench). RF 3: the local three-node cluster',
      '(127.0.0.2–.4, keyspace parley_bench_rf3, LOCAL_QUORUM). All four servers, the four Cassandra JVMs and autocannon share this',
      "machine's 2 cores. CPU per request: the process's (or the nodes') user and system time over a round, over its responses.",
      '',
      '| scenario | topology | server | req/s | p99 ms | server CPU µs/req | Cassandra CPU µs/req | errors |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      'What RF 3 costs Parley, and Parley against its floor on each:',
      '',
      '| scenario | Parley/floor RF 1 | Parley/floor RF 3 | Parley req/s RF 3 / RF 1 | Parley p99 ms RF 1 → RF 3 | Cassandra CPU µs/req RF 1 → RF 3 |',
      '|---|---|---|---|---|---|',
      ...ratioLines,
    ].join('\n');
  } finally {
    await Promise.all(contenders.map((c) => c.process.stop()));
  }
}
