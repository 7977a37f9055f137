/**
 * Starting while Cassandra cannot serve (its port refuses every connection, through a proxy of the test's own):
 * the instance listens, says why it is not ready, tells clients to retry, and serves once CQL answers; or, past
 * CASSANDRA_STARTUP_TIMEOUT_MS, gives up with one clear error and lets go of its port. A mistake no wait can
 * fix fails the start at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createApp, type App } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { Limits } from '../../../src/limits.js';
import { StorageNotReadyError } from '../../../src/db/cassandra/startup-wait.js';
import { describeStartupFailure } from '../../../src/server/startup-failure.js';
import { createLogger } from '../../../src/observability/logging.js';
import { MeDocument } from '../../generated/graphql.js';
import { gql } from '../../testkit/http.js';
import { eventually } from '../../testkit/poll.js';
import { testEnv } from '../../testkit/app.js';
import { cassandraProxy, type TcpProxy } from '../../testkit/faults/tcp-proxy.js';
import { signUp } from '../../testkit/data/users.js';

const started: App[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((app) => app.stop()));
});

/** An app whose CQL goes through a proxy that refuses every connection, its start() under way. */
async function startingBehindRefusingProxy(env: Record<string, string> = {}): Promise<{ app: App; proxy: TcpProxy; starting: Promise<void> }> {
  const { proxy, env: proxyEnv } = await cassandraProxy();
  proxy.refuseConnections();
  const config = loadConfig(testEnv({ env: { ...proxyEnv, ...env } }));
  const app = createApp({ config, logger: createLogger(config), hooks: {} });
  started.push(app);
  const starting = app.start();
  starting.catch(() => undefined); // awaited by the test
  await eventually(() => app.port !== 0, { what: 'the instance to listen' });
  return { app, proxy, starting };
}

const readiness = async (app: App) => {
  const res = await fetch(`${app.url}/ready`);
  return { status: res.status, body: (await res.json().catch(() => null)) as { ready?: boolean; reason?: string } | null };
};

describe('a start while Cassandra cannot serve', () => {
  it('listens, says why it is not ready, tells every client to retry, and serves once CQL answers', async () => {
    const { app, proxy, starting } = await startingBehindRefusingProxy();
    // The driver has been refused more than once: the start is waiting, not failing.
    await eventually(() => proxy.refused >= 2, { what: 'the driver to try to connect twice' });

    const ready = await readiness(app);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ ready: false });
    expect(ready.body!.reason).toMatch(/^starting: connecting: .*(All host\(s\) tried|ECONNRESET|connect)/i);
    expect((await fetch(`${app.url}/health`)).status).toBe(200);

    const res = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ me { login } }"}' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe(String(Limits.unavailableRetryAfterSeconds));
    const body = (await res.json()) as { errors: Array<{ extensions: Record<string, unknown> }> };
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', service: 'storage', retryAfter: Limits.unavailableRetryAfterSeconds });

    const upgrade = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${app.port}/graphql`, 'graphql-transport-ws');
      ws.once('unexpected-response', (_req, response) => resolve(response.statusCode ?? 0));
      ws.once('open', () => reject(new Error('a WebSocket opened on an instance that cannot serve')));
      ws.once('error', () => undefined);
    });
    expect(upgrade).toBe(503);

    await proxy.open();
    await starting;
    expect(await readiness(app)).toEqual({ status: 200, body: null });
    const user = await signUp(app);
    expect((await gql(app, MeDocument, {}, user.token)).data?.me?.login).toBe(user.login);
  });

  it('gives up after CASSANDRA_STARTUP_TIMEOUT_MS with one error that names the setting, and frees its port', async () => {
    const { app, proxy, starting } = await startingBehindRefusingProxy({ CASSANDRA_STARTUP_TIMEOUT_MS: '1500' });
    const port = app.port;
    const err = await starting.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(StorageNotReadyError);
    expect((err as Error).message).toMatch(/^Cassandra could not serve within 2 s \(CASSANDRA_STARTUP_TIMEOUT_MS\): connecting: /);
    expect(proxy.refused).toBeGreaterThanOrEqual(2);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    await proxy.open();
  });

  it('fails at once on a mistake the operator must fix, without waiting', async () => {
    const { proxy, env } = await cassandraProxy();
    // A data center the cluster does not have: no wait makes it appear.
    const config = loadConfig(testEnv({ env: { ...env, CASSANDRA_LOCAL_DC: 'dc_nowhere', CASSANDRA_STARTUP_TIMEOUT_MS: '600000' } }));
    const app = createApp({ config, logger: createLogger(config), hooks: {} });
    const err = await app.start().then(() => null, (e: unknown) => e);
    expect(err).not.toBeNull();
    expect(err).not.toBeInstanceOf(StorageNotReadyError);
    expect(describeStartupFailure(err).line).toMatch(/^fix CASSANDRA_LOCAL_DC: .*'dc_nowhere'/);
    await proxy.close();
  });

  it('waits for a keyspace that does not exist yet, and names CASSANDRA_MIGRATE when it gives up', async () => {
    const { proxy, env } = await cassandraProxy();
    // Migrations off: another instance or a job may be creating it this very moment.
    const config = loadConfig(testEnv({ env: { ...env, CASSANDRA_KEYSPACE: 'parley_no_such_keyspace', CASSANDRA_STARTUP_TIMEOUT_MS: '1500' } }));
    const app = createApp({ config, logger: createLogger(config), hooks: {} });
    const err = await app.start().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(StorageNotReadyError);
    expect((err as Error).message).toMatch(
      /^Cassandra could not serve within 2 s \(CASSANDRA_STARTUP_TIMEOUT_MS\): connecting: Keyspace 'parley_no_such_keyspace' does not exist; CASSANDRA_MIGRATE is off/,
    );
    await proxy.close();
  });
});
