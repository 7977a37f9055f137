/**
 * What one idle subscription holds, by heap snapshot: `npm start`'s build in
 * one process (NODE_ENV=production), snapshotted with N idle roomEvents
 * subscriptions and with one (each snapshot after V8's own full collection),
 * the difference divided by N: live heap per subscription, by constructor and
 * by the package whose closures (and their contexts) it is. It explains the
 * many-subscribers bench's RSS per 1,000.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectPath } from '../../../src/project-root.js';
import { benchEnv } from '../../kit/harness.js';
import { startChildServer } from '../../kit/servers/server-process.js';
import { PRODUCTION_ENV, remoteApp } from '../../kit/remote-parley.js';
import { startFanoutClients } from '../../kit/fanout/clients.js';
import { warmUp, type Contender } from '../../kit/fanout/ramp.js';
import { perUnit, tallyHeap } from '../../kit/profiles/heap-snapshot.js';
import { freePort } from '../../../test/testkit/free-port.js';
import { gql } from '../../../test/testkit/http.js';
import { eventually } from '../../../test/testkit/poll.js';
import { roomWith } from '../../../test/testkit/data/rooms.js';
import { signUp } from '../../../test/testkit/data/users.js';

const SUBSCRIPTIONS = Number(process.env.BENCH_IDLE_HEAP_SUBSCRIPTIONS ?? 3000);
const SUBSCRIPTION = 'subscription Idle($roomName: String!) { roomEvents(roomName: $roomName) { __typename ... on MessagePosted { message { id content } } } }';
const POST = 'mutation Post($roomName: String!, $content: String!) { postMessage(roomName: $roomName, content: $content) { id } }';

const f = (x: number, digits = 0) => x.toFixed(digits);

export default async function run(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-heap-'));
  const env = await benchEnv({
    ...PRODUCTION_ENV,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `bench-heap-${Date.now()}:`,
    PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    MAX_LIVE_CONNECTIONS_PER_ADDRESS: '1000000',
  });
  const server = await startChildServer(projectPath('dist', 'src', 'main.js'), env, ['--heapsnapshot-signal=SIGTTIN', `--diagnostic-dir=${dir}`], (line) =>
    line.includes('"Parley is listening"') ? (JSON.parse(line) as { url: string }).url.replace(/\/graphql$/, '') : undefined,
  );
  const clients = startFanoutClients();
  /** A snapshot of the server's heap, once it is written whole. */
  const snapshot = async (): Promise<string> => {
    const before = new Set(readdirSync(dir));
    process.kill(server.pid, 'SIGTTIN');
    const file = await eventually(() => readdirSync(dir).find((x) => x.endsWith('.heapsnapshot') && !before.has(x)), { timeoutMs: 120_000, what: 'heap snapshot' });
    // Written when the server can take a request again.
    await eventually(async () => (await fetch(`${server.url}/health`)).ok, { timeoutMs: 120_000, what: 'server after the snapshot' });
    return join(dir, file);
  };
  try {
    const app = remoteApp(server.url);
    const user = await signUp(app);
    const room = await roomWith(app, user);
    const wsUrl = `${server.url.replace(/^http/, 'ws')}/graphql`;
    const post = async (content: string) => !(await gql(app, POST, { roomName: room, content }, user.token)).errors?.length;
    const open = (n: number) => clients.open({ url: wsUrl, tokens: Array(n).fill(user.token), query: SUBSCRIPTION, variables: { roomName: room }, maxSeq: 64, localAddress: '127.0.0.3' });
    const idle: Contender = { name: 'idle', serverPids: [server.pid], sockets: 1, clients: [clients], post };
    await open(1);
    let seq = await warmUp(idle, 0, 5);
    const one = tallyHeap(await snapshot());
    await open(SUBSCRIPTIONS);
    idle.sockets += SUBSCRIPTIONS;
    seq = await warmUp(idle, seq, 5);
    const many = tallyHeap(await snapshot());
    const perSub = (many.total - one.total) / SUBSCRIPTIONS;
    const constructors = perUnit(one.byConstructor, many.byConstructor, SUBSCRIPTIONS).slice(0, 25);
    const packages = perUnit(one.closuresByPackage, many.closuresByPackage, SUBSCRIPTIONS).filter(([, c]) => c >= 0.5);
    return [
      `One Parley process (dist/src/main.js, NODE_ENV=production, REDIS_URL), heap snapshots (each after V8's full collection) with 1 and with`,
      `${(SUBSCRIPTIONS + 1).toLocaleString('en-US')} idle roomEvents subscriptions of one room, one graphql-ws socket each, every one live (a post reached it).`,
      'Per subscription: the difference divided by the subscriptions added.',
      '',
      `Live heap per idle subscription: ${f(perSub)} bytes (${f((perSub * 1000) / 1024 / 1024, 1)} MB per 1,000).`,
      '',
      '| what (V8 type and constructor) | count per subscription | bytes per subscription |',
      '|---|---|---|',
      ...constructors.map(([k, c, b]) => `| ${k.replace(/\|/g, '\\|')} | ${f(c, 2)} | ${f(b)} |`),
      '',
      'Closures per subscription by the package whose code made them, and the scope contexts they keep:',
      '',
      '| package | count per subscription | bytes per subscription |',
      '|---|---|---|',
      ...packages.map(([k, c, b]) => `| ${k} | ${f(c, 2)} | ${f(b)} |`),
    ].join('\n');
  } finally {
    await clients.stop();
    await server.stop();
    if (process.env.BENCH_KEEP_SNAPSHOTS) console.log(`snapshots kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
