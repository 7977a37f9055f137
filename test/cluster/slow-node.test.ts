/**
 * A node of the three that stalls (SIGSTOP for 5 s, as a long GC pause would: its sockets stay open, it answers
 * nothing) under a mixed load of reads and writes on two instances: no request fails. Reads sent to it are also
 * sent to another replica after CASSANDRA_SPECULATIVE_READ_DELAY_MS; writes wait for it or for the driver's
 * timeout. How long they wait, with and without speculative reads, is measured in `npm run bench
 * cluster-slow-node`. Then migrations with a node stalled: the schema is applied and agreed on once it resumes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/cassandra/migrate.js';
import { clusterContactPoints, pauseClusterNode } from '../../src/local-node/cluster.js';
import { BuyItemDocument, HistoryDocument, MeDocument, PostMessageDocument, SendDirectMessageDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { gql } from '../testkit/http.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { roomWith } from '../testkit/data/rooms.js';
import { createItem } from '../testkit/data/marketplace.js';
import { cqlRows } from '../testkit/cql.js';
import { eventually } from '../testkit/poll.js';

const STALLED = 2; // 127.0.0.4
const STALL_MS = 5_000;
let a: App;
let b: App;
let people: TestUser[];

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  people = await signUpMany(a, 4, 'slow');
});

type Answer = { errors?: ReadonlyArray<{ message: string; extensions?: Record<string, unknown> }> };

/** Runs `loops`, one request at a time each, until `done` resolves; counts requests and keeps every failure. */
async function loadUntil(done: Promise<void>, loops: Array<(i: number) => Promise<Answer>>, progress: { requests: number }) {
  const failures: string[] = [];
  let stopping = false;
  void done.then(() => (stopping = true));
  await Promise.all(
    loops.map(async (run) => {
      for (let i = 0; !stopping; i++) {
        try {
          const res = await run(i);
          progress.requests += 1;
          if (res.errors?.length) failures.push(`${res.errors[0]!.extensions?.code} ${res.errors[0]!.message}`);
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    }),
  );
  return failures;
}

describe('a stalled node', () => {
  it('fails no read or write while one node stalls for 5 s', async () => {
    const [alice, bob, carol, seller] = people as [TestUser, TestUser, TestUser, TestUser];
    const room = await roomWith(a, alice, [bob]);
    const item = await createItem(a, seller, { offeredUnits: 10_000 });
    const either = (i: number) => (i % 2 ? a : b);
    let resume: (() => void) | undefined;
    const progress = { requests: 0 };
    const stalled = (async () => {
      // Some load first, then the stall.
      await eventually(() => progress.requests >= 20, { what: 'the load to start' });
      resume = pauseClusterNode(STALLED);
      const until = Date.now() + STALL_MS;
      await eventually(() => Date.now() >= until, { what: 'the stall', timeoutMs: STALL_MS + 5_000, intervalMs: 100 });
      resume();
      resume = undefined;
      // And the load goes on a little after it.
      const after = Date.now() + 2_000;
      await eventually(() => Date.now() >= after, { what: 'load after the stall', intervalMs: 100 });
    })();
    try {
      const failures = await loadUntil(stalled, [
        (i) => gql(either(i), HistoryDocument, { roomName: room, first: 20 }, bob.token),
        (i) => gql(either(i), MeDocument, {}, carol.token),
        (i) => gql(either(i), PostMessageDocument, { roomName: room, content: `slow ${i}` }, alice.token),
        (i) => gql(either(i), SendDirectMessageDocument, { to: bob.login, content: `dm ${i}` }, carol.token),
        (i) => gql(either(i), BuyItemDocument, { itemId: item.id, quantity: 1 }, carol.token),
      ], progress);
      console.log(`[cluster] a node stalled for ${STALL_MS / 1000} s: ${progress.requests} requests, ${failures.length} failed`);
      expect(failures).toEqual([]);
      expect(progress.requests).toBeGreaterThan(50);
    } finally {
      resume?.();
    }
  }, 120_000);

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
