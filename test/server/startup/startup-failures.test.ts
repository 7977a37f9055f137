/**
 * Every start that fails, fails the way an operator can act on: the process (src/main.ts, as `npm start` runs
 * it) exits non-zero and prints exactly one line on stderr that names what to fix, never a stack trace, whether
 * the cause is a mistake (a setting, credentials, an edited migration, a port in use) or a Cassandra that never
 * came within CASSANDRA_STARTUP_TIMEOUT_MS. A mistake fails at once, without waiting out that time.
 */
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import cassandra from 'cassandra-driver';
import { loadMigrations } from '../../../src/db/cassandra/migrate.js';
import { cqlFaultProxy } from '../../testkit/faults/cql-fault-proxy.js';
import { freePort } from '../../testkit/free-port.js';
import { runStartToExit, STACK_LINE } from '../../testkit/starting-process.js';

/** Long enough that a start which waits on a mistake instead of failing at once runs past the test's deadline. */
const NEVER = '600000';
/** How long a start that fails at once may take (a process that loads the app first). */
const AT_ONCE_MS = 40_000;

const cql = new cassandra.Client({ contactPoints: [inject('cassandraContactPoint')], localDataCenter: 'datacenter1', socketOptions: { readTimeout: 60_000 } });
const keyspacesMade: string[] = [];
afterAll(async () => {
  for (const ks of keyspacesMade) await cql.execute(`DROP KEYSPACE IF EXISTS ${ks}`);
  await cql.shutdown();
});

/** Runs a start that must fail; its one line on stderr, once checked to be the only one and no stack trace. */
async function failedStart(env: Record<string, string>): Promise<string> {
  const { code, stderr } = await runStartToExit(env, AT_ONCE_MS);
  expect(code).not.toBe(0);
  expect(code).not.toBeNull();
  expect(stderr).not.toMatch(STACK_LINE);
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^Parley cannot start: /);
  return lines[0]!;
}

// Each test starts a process that loads the whole app first: seconds on a loaded machine.
describe('a start that fails says, in one line, what to fix', { timeout: 3 * AT_ONCE_MS }, () => {
  it('a malformed setting', async () => {
    expect(await failedStart({ CASSANDRA_REPLICATION: 'datacenter1' })).toMatch(/CASSANDRA_REPLICATION: bad entry "datacenter1"/);
  });

  it('a setting only the storage client reads', async () => {
    expect(await failedStart({ CASSANDRA_CONSISTENCY: 'QUORUMM' })).toMatch(/CASSANDRA_CONSISTENCY: "QUORUMM" is not a consistency level/);
  });

  it('a data center the cluster does not have, at once', async () => {
    const line = await failedStart({ CASSANDRA_LOCAL_DC: 'dc_nowhere', CASSANDRA_STARTUP_TIMEOUT_MS: NEVER });
    expect(line).toMatch(/fix CASSANDRA_LOCAL_DC: .*'dc_nowhere'/);
  });

  it('credentials the cluster refuses, at once', async () => {
    const { proxy, env } = await cqlFaultProxy();
    proxy.refuseCredentials();
    try {
      const line = await failedStart({ ...env, CASSANDRA_USERNAME: 'parley', CASSANDRA_PASSWORD: 'wrong', CASSANDRA_STARTUP_TIMEOUT_MS: NEVER });
      expect(line).toMatch(/Cassandra refused the credentials: set or fix CASSANDRA_USERNAME and CASSANDRA_PASSWORD \(.*incorrect\)/);
      expect(proxy.answered).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it('a migration edited after it was applied, at once', async () => {
    const keyspace = `parley_edited_${randomBytes(4).toString('hex')}`;
    keyspacesMade.push(keyspace);
    const first = loadMigrations()[0]!;
    // What a keyspace looks like after cql/ was applied and the first file then changed: its recorded checksum differs.
    await cql.execute(`CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
    await cql.execute(`CREATE TABLE ${keyspace}.schema_migrations (version text PRIMARY KEY, checksum text, applied_at timestamp)`);
    await cql.execute(`INSERT INTO ${keyspace}.schema_migrations (version, checksum, applied_at) VALUES (?, 'not-this-file', toTimestamp(now()))`, [first.version], { prepare: true });
    const line = await failedStart({ CASSANDRA_KEYSPACE: keyspace, CASSANDRA_MIGRATE: '1', CASSANDRA_STARTUP_TIMEOUT_MS: NEVER });
    expect(line).toContain(`migration ${first.version} was changed after it was applied: restore cql/${first.version}.cql`);
    expect(line).toMatch(/new numbered file/);
  });

  it('no Cassandra at all, once CASSANDRA_STARTUP_TIMEOUT_MS has passed', async () => {
    const nothing = await freePort();
    const line = await failedStart({ CASSANDRA_CONTACT_POINTS: `127.0.0.1:${nothing}`, CASSANDRA_STARTUP_TIMEOUT_MS: '1500' });
    expect(line).toMatch(/Cassandra could not serve within 2 s \(CASSANDRA_STARTUP_TIMEOUT_MS\): .*ECONNREFUSED.*CASSANDRA_CONTACT_POINTS/);
  });

  it('a port in use', async () => {
    const holder = createServer();
    const port = await new Promise<number>((resolve) => holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port)));
    try {
      const line = await failedStart({ PORT: String(port) });
      expect(line).toMatch(new RegExp(`port ${port} is in use .*set PORT to a free port`));
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
