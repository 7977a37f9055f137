/**
 * How many idle subscribers one instance holds: `npm start`'s build with
 * WEB_CONCURRENCY workers (each process under this machine's 20,000 open
 * files), idle roomEvents subscriptions opened step by step up to 100,000 by
 * subscriber processes of their own, each from its own loopback address. At
 * each step: the time to accept the step's sockets, the memory of the
 * instance's processes per 1,000 subscriptions (RSS from /proc, after a probe
 * post reached every one of them: all are live), and the delivery latency to
 * a busy subset of 1,000 subscribers of another room, posted to at 20 a second
 * while all the others stay connected.
 */
import { readFileSync } from 'node:fs';
import { projectPath } from '../../../src/project-root.js';
import { benchEnv } from '../../kit/harness.js';
import { startChildServer, type ServerProcess } from '../../kit/servers/server-process.js';
import { PRODUCTION_ENV, remoteApp } from '../../kit/remote-parley.js';
import { startFanoutClients, type FanoutClients } from '../../kit/fanout/clients.js';
import { runStep, warmUp, type Contender } from '../../kit/fanout/ramp.js';
import { freePort } from '../../../test/testkit/free-port.js';
import { gql } from '../../../test/testkit/http.js';
import { roomWith } from '../../../test/testkit/data/rooms.js';
import { signUp } from '../../../test/testkit/data/users.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const WORKERS = Number(process.env.BENCH_WORKERS ?? 6);
const LEVELS = (process.env.BENCH_LEVELS ?? '10000,25000,50000,100000').split(',').map(Number);
/** Sockets per subscriber process: under the 20,000 open files a process may have here. */
const PER_CLIENT_PROCESS = 16_000;
const BUSY = 1_000;
const BUSY_RATE = 20;
const BUSY_MS = 10_000;
const SUBSCRIPTION = 'subscription Idle($roomName: String!) { roomEvents(roomName: $roomName) { __typename ... on MessagePosted { message { id content } } } }';
const POST = 'mutation Post($roomName: String!, $content: String!) { postMessage(roomName: $roomName, content: $content) { id } }';

/** The instance's processes: the primary and its workers. */
function processTree(root: number): number[] {
  const children = (pid: number): number[] => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  return [root, ...children(root).flatMap((c) => [c, ...children(c)])];
}

function rssBytes(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      return sum + Number(kb ?? 0) * 1024;
    } catch {
      return sum;
    }
  }, 0);
}

async function startMain(): Promise<ServerProcess> {
  const env = await benchEnv({
    ...PRODUCTION_ENV,
    REDIS_URL,
    REDIS_PREFIX: `bench-many-${Date.now()}:`,
    WEB_CONCURRENCY: String(WORKERS),
    PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    MAX_LIVE_CONNECTIONS_PER_ADDRESS: '1000000',
    ROOM_POSTS_PER_WINDOW: '1000000',
  });
  let listening = 0;
  return startChildServer(projectPath('dist', 'src', 'main.js'), env, [], (line) => {
    if (!line.includes('"Parley is listening"') || ++listening < WORKERS) return undefined;
    return (JSON.parse(line) as { url: string }).url.replace(/\/graphql$/, '');
  });
}

const f = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '–');

export default async function run(): Promise<string> {
  const server = await startMain();
  const clients: FanoutClients[] = [];
  /** Sockets opened on each subscriber process. */
  const openedOn = new Map<FanoutClients, number>();
  try {
    const app = remoteApp(server.url);
    const user = await signUp(app);
    const [idleRoom, busyRoom] = [await roomWith(app, user), await roomWith(app, user)];
    const wsUrl = `${server.url.replace(/^http/, 'ws')}/graphql`;
    const postTo = (roomName: string) => async (content: string) => {
      const result = await gql(app, POST, { roomName, content }, user.token);
      return !result.errors?.length && !!result.data;
    };
    const pids = () => processTree(server.pid);
    const baseline = rssBytes(pids());

    // The busy subset first, on a process of its own: it stays open through every step.
    const busyClients = startFanoutClients();
    clients.push(busyClients);
    await busyClients.open({ url: wsUrl, tokens: Array(BUSY).fill(user.token), query: SUBSCRIPTION, variables: { roomName: busyRoom }, maxSeq: 4096, localAddress: '127.0.0.2' });
    const busy: Contender = { name: 'busy', serverPids: [server.pid], sockets: BUSY, clients: [busyClients], post: postTo(busyRoom) };
    let busySeq = await warmUp(busy, 0, 50);

    const idle: Contender = { name: 'idle', serverPids: [server.pid], sockets: 0, clients: [], post: postTo(idleRoom) };
    let idleSeq = 0;
    const rows: string[] = [];
    let reached = 0;
    let stoppedBy = '';
    for (const level of LEVELS) {
      const began = Date.now();
      const before = idle.sockets;
      try {
        while (idle.sockets < level) {
          let target = idle.clients.at(-1);
          if (!target || openedOn.get(target)! >= PER_CLIENT_PROCESS) {
            target = startFanoutClients();
            clients.push(target);
            idle.clients.push(target);
            openedOn.set(target, 0);
          }
          const n = Math.min(level - idle.sockets, PER_CLIENT_PROCESS - openedOn.get(target)!);
          const address = `127.0.0.${3 + idle.clients.length}`;
          await target.open({ url: wsUrl, tokens: Array(n).fill(user.token), query: SUBSCRIPTION, variables: { roomName: idleRoom }, maxSeq: 64, localAddress: address });
          openedOn.set(target, openedOn.get(target)! + n);
          idle.sockets += n;
        }
      } catch (err) {
        stoppedBy = `opening past ${idle.sockets}: ${(err as Error).message}`;
        break;
      }
      const acceptMs = Date.now() - began;
      // Live: a probe post reaches every idle subscription.
      idleSeq = await warmUp(idle, idleSeq, 20);
      const rss = rssBytes(pids());
      const step = await runStep(busy, BUSY_RATE, BUSY_MS, busySeq);
      busySeq += step.posts;
      reached = idle.sockets;
      const held = idle.sockets + BUSY;
      const row = `| ${idle.sockets.toLocaleString('en-US')} | ${f(acceptMs / 1000, 1)} | ${f(((idle.sockets - before) * 1000) / acceptMs)} | ${f((rss - baseline) / 1024 / 1024)} | ${f((rss - baseline) / 1024 / 1024 / (held / 1000), 1)} | ${f(step.p50, 1)} | ${f(step.p99, 1)} | ${step.lost} |`;
      console.log(row);
      rows.push(row);
    }
    return [
      `One instance: \`npm start\`'s build (dist/src/main.js, NODE_ENV=production) with WEB_CONCURRENCY=${WORKERS} workers on one port and`,
      `REDIS_URL, each worker a process under this machine's limit of 20,000 open files. Idle roomEvents subscriptions, one`,
      `graphql-ws socket each, opened by subscriber processes of ${PER_CLIENT_PROCESS.toLocaleString('en-US')} sockets each, each process from its own`,
      'loopback address, 50 handshakes at a time per process; all of one user on one room (nothing is posted there but',
      'one probe per step, which every subscription must receive before the step is measured). A busy subset of',
      `${BUSY.toLocaleString('en-US')} subscriptions of another room, opened first, gets ${BUSY_RATE} posts a second for ${BUSY_MS / 1000} s at each step while all the idle ones stay`,
      'connected; its latency is receipt minus send, the post\'s own write included. Memory: RSS of the primary and its',
      'workers from /proc, above what they held before any subscription, with no forced collection.',
      '',
      '| idle subscriptions | accept s (this step) | accepted/s (this step) | RSS above baseline, MB | MB per 1,000 held (idle and busy) | busy p50 ms | busy p99 ms | busy lost |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      `Reached ${reached.toLocaleString('en-US')} idle subscriptions${stoppedBy ? `; stopped ${stoppedBy}` : ''}.`,
      'Goal: 100,000 held, at most 10 MB of RSS per 1,000 at that size, the busy subset\'s p99 at most 1 s.',
    ].join('\n');
  } finally {
    for (const c of clients.reverse()) await c.stop().catch(() => undefined);
    await server.stop();
  }
}
