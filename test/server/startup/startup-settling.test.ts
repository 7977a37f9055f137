/**
 * Starting against a cluster that is still settling, as an orchestrator starts Parley beside Cassandra: the
 * coordinator does not know the keyspace yet (it answers 8704, "Keyspace ... does not exist"), or the keyspace is
 * being created at that very moment. The instance (a process of its own, as `npm start` runs it) waits, says why
 * on /ready meanwhile, ends ready, and prints no stack trace.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import cassandra from 'cassandra-driver';
import pino from 'pino';
import { loadConfig } from '../../../src/config.js';
import { loadMigrations, migrate } from '../../../src/db/cassandra/migrate.js';
import { testEnv } from '../../testkit/app.js';
import { CqlErrorCode, cqlFaultProxy } from '../../testkit/faults/cql-fault-proxy.js';
import { eventually } from '../../testkit/poll.js';
import { spawnStart, STACK_LINE, type StartingProcess } from '../../testkit/starting-process.js';

/** A client of the test's own, outside any keyspace. */
const cql = new cassandra.Client({ contactPoints: [inject('cassandraContactPoint')], localDataCenter: 'datacenter1', socketOptions: { readTimeout: 60_000 } });
const keyspacesMade: string[] = [];
afterAll(async () => {
  for (const ks of keyspacesMade) await cql.execute(`DROP KEYSPACE IF EXISTS ${ks}`);
  await cql.shutdown();
});

/** Until the start answers /ready with 200: every 503 it answered meanwhile. */
async function readyAfterWaiting(start: StartingProcess, timeoutMs: number): Promise<Array<string | undefined>> {
  const reasons: Array<string | undefined> = [];
  await eventually(
    async () => {
      const ready = await start.ready();
      if (ready?.status === 503) reasons.push(ready.body?.reason);
      return ready?.status === 200;
    },
    { timeoutMs, intervalMs: 50, what: 'the start to be ready' },
  );
  return reasons;
}

// Each test starts a process that loads the whole app first: seconds on a loaded machine.
describe('a start against a cluster that is still settling', { timeout: 240_000 }, () => {
  it('waits while the coordinator does not know the keyspace yet (8704), says so on /ready, and ends ready without a stack trace', async () => {
    const keyspace = inject('keyspace');
    const { proxy, env } = await cqlFaultProxy();
    // A node that has not learnt of the keyspace yet refuses to USE it: the client every start opens meets it.
    proxy.failMatching(new RegExp(`^USE "${keyspace}"$`), CqlErrorCode.INVALID, `Keyspace '${keyspace}' does not exist`);
    const start = await spawnStart({ ...env, CASSANDRA_MIGRATE: '1', CASSANDRA_STARTUP_TIMEOUT_MS: '60000' });
    try {
      const waiting = await eventually(
        async () => {
          const ready = proxy.answered >= 2 ? await start.ready() : undefined;
          return ready?.status === 503 && /does not exist/.test(ready.body?.reason ?? '') ? ready : undefined;
        },
        { timeoutMs: 60_000, what: 'the start to wait for the keyspace, and say so', intervalMs: 50 },
      );
      expect(waiting.body).toMatchObject({ ready: false });
      expect(waiting.body!.reason).toMatch(new RegExp(`^starting: .*Keyspace '${keyspace}' does not exist`));

      proxy.heal();
      await readyAfterWaiting(start, 30_000);
      const res = await fetch(`${start.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
      expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
      expect(start.stderr()).not.toMatch(STACK_LINE);
      expect(await start.stop()).toBe(0);
      expect(start.stderr()).toBe('');
    } finally {
      await start.stop();
      await proxy.close();
    }
  });

  it('waits while its keyspace is being created by another instance, and serves once cql/ is all applied', async () => {
    const keyspace = `parley_settle_${randomBytes(4).toString('hex')}`;
    keyspacesMade.push(keyspace);
    // Migrations off: another instance (here, the test) creates the keyspace and applies cql/ while this one starts.
    const start = await spawnStart({ CASSANDRA_KEYSPACE: keyspace, CASSANDRA_MIGRATE: '0', CASSANDRA_STARTUP_TIMEOUT_MS: '120000' });
    try {
      const waiting = await eventually(
        async () => {
          const ready = await start.ready();
          return ready?.status === 503 && /does not exist/.test(ready.body?.reason ?? '') ? ready : undefined;
        },
        { timeoutMs: 60_000, what: 'the start to wait for its keyspace, and say so', intervalMs: 50 },
      );
      expect(waiting.body!.reason).toMatch(new RegExp(`^starting: connecting: Keyspace '${keyspace}' does not exist`));

      const config = loadConfig(testEnv({ env: { CASSANDRA_KEYSPACE: keyspace } }));
      const applying = migrate(config.cassandra, [inject('cassandraContactPoint')], pino({ level: 'silent' }));
      const reasons = await readyAfterWaiting(start, 120_000);
      // Ready only once every migration is recorded, never while its tables are still being created.
      const recorded = await cql.execute(`SELECT version FROM ${keyspace}.schema_migrations`);
      expect(recorded.rowLength).toBe(loadMigrations().length);
      await applying;
      expect(reasons.length).toBeGreaterThan(0);
      expect(reasons.every((r) => r?.startsWith('starting: '))).toBe(true);
      const res = await fetch(`${start.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
      expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
      expect(await start.stop()).toBe(0);
      expect(start.stderr()).not.toMatch(STACK_LINE);
      expect(start.stderr()).toBe('');
    } finally {
      await start.stop();
    }
  });
});
