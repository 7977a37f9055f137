/** The server as a process: its HTTP endpoints, readiness against storage, and a graceful shutdown. */
import { describe, expect, it, beforeAll } from 'vitest';
import type { App } from '../../src/app.js';
import { MeDocument } from '../generated/graphql.js';
import { startApp, stopApp } from '../testkit/app.js';
import { codes, gql } from '../testkit/http.js';
import { signUp } from '../testkit/data/users.js';
import { startAppBehindCassandraProxy } from '../testkit/faults/tcp-proxy.js';
import { eventually } from '../testkit/poll.js';
import { wsClient } from '../testkit/ws.js';
import { metricValue } from '../testkit/metrics.js';

let app: App;
beforeAll(async () => {
  app = await startApp();
});

describe('HTTP endpoints', () => {
  it('answers {__typename} as the README curl does', async () => {
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{__typename}' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('serves /health and /ready', async () => {
    expect((await fetch(`${app.url}/health`)).status).toBe(200);
    expect((await fetch(`${app.url}/ready`)).status).toBe(200);
  });

  it('serves GraphiQL with every script and style from the server itself', async () => {
    const res = await fetch(`${app.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<div id="root">');
    // No <script src> or <link href> to another host, and none of the CDNs Yoga's default GraphiQL uses.
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|cdnjs|esm\.sh/i);
    expect(html.length).toBeGreaterThan(100_000); // the bundle is inlined
  });

  it('refuses a malformed token without leaking internals', async () => {
    const res = await gql(app, '{ me { login } }', {}, 'not-a-jwt');
    expect(codes(res)).toEqual(['UNAUTHENTICATED']);
    expect(JSON.stringify(res)).not.toMatch(/at .*\.ts|stack/i);
  });
});

describe('production mode', () => {
  it('turns off GraphiQL and introspection unless enabled', async () => {
    const prod = await startApp({ env: { NODE_ENV: 'production' } });
    const page = await fetch(`${prod.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toContain('<div id="root">');
    const introspection = await gql(prod, '{ __schema { queryType { name } } }');
    expect(introspection.errors?.[0]?.message).toMatch(/introspection/i);
    await stopApp(prod);

    const exposed = await startApp({ env: { NODE_ENV: 'production', EXPOSE_SCHEMA: 'true' } });
    const ok = await gql(exposed, '{ __schema { queryType { name } } }');
    expect(ok.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});

describe('readiness while Cassandra is unreachable', () => {
  it('fails /ready, masks query errors, and recovers when the node is back', async () => {
    const { app: behindProxy, proxy } = await startAppBehindCassandraProxy();
    const user = await signUp(behindProxy);
    expect((await fetch(`${behindProxy.url}/ready`)).status).toBe(200);

    await proxy.close();
    const ready = await fetch(`${behindProxy.url}/ready`);
    expect(ready.status).toBe(503);
    expect((await fetch(`${behindProxy.url}/health`)).status).toBe(200);

    // A query that needs Cassandra fails with a stable error that says to retry, not with a bug.
    const res = await gql(behindProxy, MeDocument, {}, user.token);
    expect(codes(res)).toEqual(['SERVICE_UNAVAILABLE']);
    expect(res.errors?.[0]?.extensions?.retryAfter).toBeGreaterThan(0);
    expect(JSON.stringify(res)).not.toMatch(/NoHostAvailable|cassandra|127\.0\.0\.1/i);

    await proxy.open();
    await eventually(async () => (await fetch(`${behindProxy.url}/ready`)).status === 200, {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: '/ready to recover',
    });
  });
});

describe('graceful shutdown', () => {
  it('closes WebSockets with 1001 and stops answering', async () => {
    const doomed = await startApp();
    const client = wsClient(doomed);
    const url = doomed.url;
    // Stopped once the socket is open (acknowledged) and the server holds it: exactly this one.
    await new Promise<void>((resolve) => client.on('connected', () => resolve()));
    expect(await metricValue(doomed, 'parley_websockets_open')).toBe(1);
    await stopApp(doomed);
    expect((await client.closed).code).toBe(1001);
    await expect(fetch(`${url}/health`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  });
});
