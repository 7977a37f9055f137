/**
 * Cross-origin access: production allows no foreign page unless CORS_ORIGINS
 * names it, development allows any; the WebSocket upgrade follows the same
 * rule; credentials (cookies) are never allowed, since tokens travel in a header.
 */
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { startApp, stopApp } from '../testkit/app.js';
import { tryUpgrade } from '../testkit/upgrade.js';

const FOREIGN = 'https://evil.example';
const FRONTEND = 'https://app.example';

async function crossOriginPost(app: App, origin: string) {
  return fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: '{"query":"{ __typename }"}',
  });
}

async function preflight(app: App, origin: string) {
  return fetch(`${app.url}/graphql`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });
}

/** Opens a graphql-ws socket as a page from `origin` would: the status the upgrade got, or 101. */
async function upgradeStatus(app: App, origin?: string): Promise<number> {
  const result = await tryUpgrade(app, origin ? { origin } : {});
  if (typeof result === 'number') return result;
  result.close();
  return 101;
}

describe('production', () => {
  it('allows no foreign origin by default, over HTTP and WebSocket', async () => {
    const app = await startApp({ env: { NODE_ENV: 'production' } });
    const res = await crossOriginPost(app, FOREIGN);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    const pre = await preflight(app, FOREIGN);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();

    expect(await upgradeStatus(app, FOREIGN)).toBe(403);
    // Clients that are not browsers send no Origin; GraphiQL, when exposed, is same-origin.
    expect(await upgradeStatus(app)).toBe(101);
    expect(await upgradeStatus(app, app.url)).toBe(101);
    await stopApp(app);
  });

  it('allows exactly the origins in CORS_ORIGINS, without credentials', async () => {
    const app = await startApp({ env: { NODE_ENV: 'production', CORS_ORIGINS: `${FRONTEND},http://localhost:5173` } });
    const allowed = await crossOriginPost(app, FRONTEND);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(FRONTEND);
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    expect(allowed.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
    const pre = await preflight(app, FRONTEND);
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(FRONTEND);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/authorization/);

    expect((await crossOriginPost(app, FOREIGN)).headers.get('access-control-allow-origin')).toBeNull();
    expect(await upgradeStatus(app, FRONTEND)).toBe(101);
    expect(await upgradeStatus(app, FOREIGN)).toBe(403);
    await stopApp(app);
  });

  it('refuses to start with a CORS_ORIGINS entry that is not an origin', async () => {
    await expect(startApp({ env: { NODE_ENV: 'production', CORS_ORIGINS: 'https://app.example/path' } })).rejects.toThrow(/CORS_ORIGINS/);
  });
});

describe('development', () => {
  it('allows any origin, still without credentials', async () => {
    const app = await startApp();
    const res = await crossOriginPost(app, FOREIGN);
    expect(res.headers.get('access-control-allow-origin')).toBe(FOREIGN);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(await upgradeStatus(app, FOREIGN)).toBe(101);
    await stopApp(app);
  });
});
