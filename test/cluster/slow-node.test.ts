/**
 * A node of the three that stalls (SIGSTOP, as a long GC pause or a frozen VM would: its sockets stay open, it answers
 * nothing) for 20 s under the mixed load of test/testkit/faults/fault-load.ts on two instances, each a process of its
 * own: every kind of request goes on inside the stall, at least a floor of each, none waits a request timeout, none
 * fails, and every acknowledged write is found once. Requests leave the stalled node for the others once it has
 * answered nothing for 200-400 ms with requests in flight (src/db/cassandra/policies.ts); a read or idempotent write
 * already sent to it is sent to another replica after CASSANDRA_SPECULATIVE_READ_DELAY_MS / _WRITE_DELAY_MS, a logged
 * batch runs unlogged as well after CASSANDRA_BATCHLOG_PATIENCE_MS, an LWT is read back at SERIAL through the other
 * replicas after CASSANDRA_LWT_PATIENCE_MS. How long reads wait, with and without speculative reads, is measured in
 * `npm run bench cluster-slow-node`. Then migrations with a node stalled: the schema is applied and agreed on once
 * it resumes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/cassandra/migrate.js';
import { clusterContactPoints, pauseClusterNode } from '../../src/local-node/cluster.js';
import { startApp } from '../testkit/app.js';
import { startAppProcess } from '../testkit/app-process.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { roomWith } from '../testkit/data/rooms.js';
import { createItem } from '../testkit/data/marketplace.js';
import { cqlRows } from '../testkit/cql.js';
import { eventually } from '../testkit/poll.js';
import { expectEveryWriteExactlyOnce, expectWindow, LOAD_KINDS, startFaultLoad, type LoadCast } from '../testkit/faults/fault-load.js';

const STALLED = 2; // 127.0.0.4
/** How long the node stalls under load: longer than the request timeout (12 s), which bounds what it can hold up. */
const LOAD_STALL_MS = 20_000;
/** How long it stalls while migrations run. */
const STALL_MS = 10_000;
/**
 * Requests of each kind answered inside the stall, at least (a loop held through it answers none), and the longest
 * wait of any request that overlaps it: shorter than the stall, so none is held until the node resumes (one join
 * was, 22.2 s, while a statement's preparation could go to the stalled node). Reads, idempotent writes and logged
 * batches leave the stalled node within about a second (a post's batch too: only its list columns, bound empty
 * here, would keep it from being retried elsewhere); an LWT sent to it in the moment before it was seen not to
 * answer is given up after CASSANDRA_LWT_PATIENCE_MS (6 s) and read back through the other replicas. So no request
 * waits out more than one request timeout (12 s).
 */
const STALL_RULE = { floor: 2 } as const;
const LONGEST_MS = 12_000;
const OFFERED = 100_000;
let a: App;
let instances: App[];
let people: TestUser[];

beforeAll(async () => {
  const [host, one, two] = await Promise.all([startApp({ redis: true }), startAppProcess({ redis: true }), startAppProcess({ redis: true })]);
  a = host;
  instances = [one.app, two.app];
  people = await signUpMany(a, 8, 'slow');
}, 120_000);

/** Keeps the load going until `until` (a deadline poll: the load is what runs meanwhile). */
const loadUntil = (until: number) => eventually(() => Date.now() >= until, { what: 'the load to run its window', timeoutMs: until - Date.now() + 10_000, intervalMs: 100 });

/** How long a statement never run before may take while a node stalls, prepared first: far under a request timeout. */
const FIRST_RUN_MS = 4_000;

/**
 * Runs statements no instance ran before, one at a time, once `app` has seen the stalled node time out: the driver
 * prepares each on one node before running it, a request without a partition to route by. The time each took, in ms.
 */
async function firstRunsWhileStalled(app: App): Promise<number[]> {
  const { client } = app.services.db;
  const stalled = client.hosts.get(`127.0.0.${STALLED + 2}:9042`)!;
  await client.execute('SELECT release_version FROM system.local', [], { host: stalled, readTimeout: 500, prepare: false }).then(
    () => expect.fail('the stalled node answered'),
    (err: Error) => expect(err.name).toBe('OperationTimedOutError'),
  );
  const took: number[] = [];
  for (let i = 0; i < 12; i++) {
    const startedAt = Date.now();
    await client.execute(`SELECT release_version FROM system.local /* first run ${i} ${startedAt} */`, [], { prepare: true });
    took.push(Date.now() - startedAt);
  }
  return took;
}

describe('a stalled node', () => {
  it('answers every kind of request while one node stalls for 20 s, none held until it resumes, losing nothing', async () => {
    const [poster, creator, joiner, sender, recipient, buyer, reactor, seller] = people as [TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser];
    const cast: LoadCast = { poster, creator, joiner, sender, recipient, buyer, reactor };
    const room = await roomWith(a, poster, [reactor]);
    const item = await createItem(a, seller, { offeredUnits: OFFERED });
    const load = startFaultLoad(instances, cast, room, item.id, OFFERED);
    let stalledAt = 0;
    let resumedAt = 0;
    try {
      await eventually(() => load.acknowledged.posts.length >= 10 && load.acknowledged.purchases.some((p) => p.keyed), { what: 'the load to run', timeoutMs: 30_000 });
      const resume = pauseClusterNode(STALLED);
      stalledAt = Date.now();
      try {
        const [prepared] = await Promise.all([firstRunsWhileStalled(a), loadUntil(stalledAt + LOAD_STALL_MS)]);
        // Round robin would send a third of them to the stalled node, each waiting a request timeout there.
        expect(Math.max(...prepared), `the slowest of ${prepared.length} statements first run in the stall (ms each: ${prepared.join(', ')})`).toBeLessThan(FIRST_RUN_MS);
      } finally {
        resume();
        resumedAt = Date.now();
      }
      // And the load goes on a little after it.
      await loadUntil(resumedAt + 3_000);
    } finally {
      await load.stop();
    }
    const inside = expectWindow(load, `while node ${STALLED + 1} stalls`, stalledAt, resumedAt, STALL_RULE);
    for (const kind of LOAD_KINDS) expect(inside.longest[kind], `the longest ${kind} request`).toBeLessThanOrEqual(LONGEST_MS);
    await expectEveryWriteExactlyOnce(a, load, cast);
  }, 180_000);

  it('applies migrations to a new keyspace with a node stalled, agreed on by every node once it resumes', async () => {
    const keyspace = `parley_slow_${Date.now().toString(36)}`;
    const config = loadConfig({ CASSANDRA_KEYSPACE: keyspace, CASSANDRA_REPLICATION: 'datacenter1:3', CASSANDRA_CONTACT_POINTS: clusterContactPoints() });
    const resume = pauseClusterNode(STALLED);
    let migrating: Promise<string[]> | undefined;
    try {
      migrating = migrate(config.cassandra, clusterContactPoints().split(','), pino({ level: 'silent' }));
      // It waits for schema agreement meanwhile: the stalled node cannot agree.
      const until = Date.now() + STALL_MS;
      await eventually(() => Date.now() >= until, { what: 'the stall', timeoutMs: STALL_MS + 5_000, intervalMs: 100 });
    } finally {
      resume();
    }
    const applied = await migrating!;
    expect(applied.length).toBeGreaterThan(10);
    // Every node has every table of the keyspace.
    const tables = await cqlRows(a, 'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?', [keyspace]);
    expect(tables.map((t) => t.table_name)).toContain('pending_room_notices');
    const versions = new Set<string>();
    for (const host of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
      const rs = await a.services.db.client.execute('SELECT schema_version FROM system.local', [], { host: a.services.db.client.hosts.get(`${host}:9042`) });
      versions.add(String(rs.first()?.schema_version));
    }
    expect(versions.size).toBe(1);
  }, 180_000);
});
