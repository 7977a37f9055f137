/**
 * Reads while one node of the local three-node cluster stalls (SIGSTOP, as a long GC pause would), with and
 * without speculative reads (CASSANDRA_SPECULATIVE_READ_DELAY_MS 250 against 0): two instances on one keyspace
 * at replication factor 3, the same reads sent to both side by side, a node stalled for a fixed time each round. Starts the cluster when it does not answer.
 */
import { pauseClusterNode, clusterContactPoints, startCluster, CLUSTER_HOSTS, CLUSTER_CQL_PORT } from '../../src/local-node/cluster.js';
import { cqlAnswers } from '../../src/local-node/launcher.js';
import type { App } from '../../src/app.js';
import { HistoryDocument, MeDocument } from '../../test/generated/graphql.js';
import { gql } from '../../test/testkit/http.js';
import { post, roomWith } from '../../test/testkit/data/rooms.js';
import { signUp } from '../../test/testkit/data/users.js';
import { benchApp, stats } from '../kit/harness.js';

const ROUNDS = 6;
const STALL_MS = 3_000;
const CONTENDERS = { speculative: '250', 'not speculative': '0' } as const;
type Contender = keyof typeof CONTENDERS;

export default async function clusterSlowNode(): Promise<string> {
  const up = await Promise.all(CLUSTER_HOSTS.map((host) => cqlAnswers(host, CLUSTER_CQL_PORT)));
  if (!up.every(Boolean)) await startCluster();
  const cluster = { CASSANDRA_CONTACT_POINTS: clusterContactPoints(), CASSANDRA_REPLICATION: 'datacenter1:3', CASSANDRA_KEYSPACE: 'parley_bench_rf3' };
  const apps = {} as Record<Contender, App>;
  for (const [name, delay] of Object.entries(CONTENDERS) as Array<[Contender, string]>) {
    apps[name] = await benchApp({ env: { ...cluster, CASSANDRA_SPECULATIVE_READ_DELAY_MS: delay } });
  }
  const app = apps.speculative;
  const alice = await signUp(app);
  const room = await roomWith(app, alice);
  for (let i = 0; i < 40; i++) await post(app, alice, room, `message ${i}`);

  const names = Object.keys(CONTENDERS) as Contender[];
  const samples: Record<Contender, { stalled: number[]; healthy: number[]; failed: number }> = {
    speculative: { stalled: [], healthy: [], failed: 0 },
    'not speculative': { stalled: [], healthy: [], failed: 0 },
  };
  /** Sequential reads (a page of history, then `me`) on `name` for `ms`, each timed. */
  const readFor = async (name: Contender, ms: number, into: number[]) => {
    const until = Date.now() + ms;
    for (let i = 0; Date.now() < until; i++) {
      const started = performance.now();
      const res = i % 2 ? await gql(apps[name], MeDocument, {}, alice.token) : await gql(apps[name], HistoryDocument, { roomName: room, first: 20 }, alice.token);
      into.push(performance.now() - started);
      if (res.errors) samples[name].failed += 1;
    }
  };
  // Warm-up with every node answering: statements prepared (the driver prepares a statement on every node the
  // first time, which a stalled node would hold up), pools full.
  await Promise.all(names.map((name) => readFor(name, 2_000, [])));
  for (let round = 0; round < ROUNDS; round++) {
    // Both contenders read side by side through the same stall (one read at a time each: they hardly compete for
    // the machine), then after it. The stall lasts STALL_MS whatever the reads do; a read still waiting when it
    // ends is timed to its answer all the same.
    const node = round % CLUSTER_HOSTS.length;
    const resume = pauseClusterNode(node);
    const resumed = new Promise<void>((done) => setTimeout(() => done(resume()), STALL_MS));
    await Promise.all(names.map((name) => readFor(name, STALL_MS, samples[name].stalled)));
    await resumed;
    await Promise.all(names.map((name) => readFor(name, 1_000, samples[name].healthy)));
  }
  await Promise.all(Object.values(apps).map((a) => a.stop()));

  const row = (name: Contender, phase: 'stalled' | 'healthy') => {
    const s = stats(samples[name][phase]);
    const sorted = [...samples[name][phase]].sort((x, y) => x - y);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]!;
    return `| ${name} | ${phase} | ${s.n} | ${s.p50.toFixed(1)} | ${s.p95.toFixed(1)} | ${p99.toFixed(1)} | ${s.max.toFixed(0)} |`;
  };
  const p99Of = (name: Contender) => {
    const sorted = [...samples[name].stalled].sort((x, y) => x - y);
    return sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]!;
  };
  return [
    `Reads (a page of 20 messages, then \`me\`, one at a time) on one instance each, side by side, ${ROUNDS} rounds: each round stalls`,
    `one node (SIGSTOP, nodes in turn) for ${STALL_MS / 1000} s while both contenders read, then both read 1 s with every node answering.`,
    '',
    '| contender | phase | reads | p50 ms | p95 ms | p99 ms | max ms |',
    '|---|---|---|---|---|---|---|',
    row('speculative', 'stalled'),
    row('not speculative', 'stalled'),
    row('speculative', 'healthy'),
    row('not speculative', 'healthy'),
    '',
    `p99 while a node stalls, speculative / not: ${(p99Of('speculative') / p99Of('not speculative')).toFixed(2)}. ` +
      `Failed reads: ${samples.speculative.failed} speculative, ${samples['not speculative'].failed} not.`,
  ].join('\n');
}
