/**
 * One client address may hold MAX_LIVE_CONNECTIONS_PER_ADDRESS live
 * connections (WebSockets and SSE streams together) on an instance: the next
 * one from it is refused with 429 until one closes, while other addresses are
 * served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { App } from '../../src/app.js';
import { startApp, stopApp } from '../testkit/app.js';
import { eventually } from '../testkit/poll.js';
import { tryUpgrade } from '../testkit/upgrade.js';
import { sseSubscribe } from '../testkit/sse.js';
import { signUp } from '../testkit/data/users.js';
import { ProfileUpdatedDocument } from '../generated/graphql.js';

let app: App;
beforeAll(async () => {
  // Behind a trusted proxy, so each socket can say which address it comes from.
  app = await startApp({ env: { MAX_LIVE_CONNECTIONS_PER_ADDRESS: '3', TRUST_PROXY: 'true' } });
});
afterAll(() => stopApp(app));

/** A socket from `address`, once open; or the HTTP status its upgrade was refused with. */
const connect = (address: string) => tryUpgrade(app, { headers: { 'x-forwarded-for': address } });

describe('open WebSockets per client address', () => {
  it('refuses an address its fourth socket with 429, serves other addresses, and lets it in again once one closes', async () => {
    const held = await Promise.all([connect('10.0.0.1'), connect('10.0.0.1'), connect('10.0.0.1')]);
    expect(held.every((s) => s instanceof WebSocket)).toBe(true);
    expect(await connect('10.0.0.1')).toBe(429);

    const other = await connect('10.0.0.2');
    expect(other).toBeInstanceOf(WebSocket);

    (held[0] as WebSocket).close();
    // The server counts the socket out once its close arrives.
    let again: WebSocket | number = 0;
    await eventually(async () => (again = await connect('10.0.0.1')) instanceof WebSocket, { what: 'a socket from 10.0.0.1 once one closed' });
    expect(await connect('10.0.0.1')).toBe(429);

    for (const s of [...held.slice(1), other, again]) (s as WebSocket).close();
  });

  it('counts SSE streams with WebSockets: a full address gets 429 RATE_LIMITED for its next stream, and room again once one ends', async () => {
    const user = await signUp(app);
    const from = { 'x-forwarded-for': '10.0.0.3' };
    const stream = () => sseSubscribe(app, ProfileUpdatedDocument, { login: user.login }, user.token, from);
    const sockets = await Promise.all([connect('10.0.0.3'), connect('10.0.0.3')]);
    const open = await stream();
    expect(open.status).toBe(200);

    const refused = await stream();
    expect(refused.status).toBe(429);
    expect(await refused.rest()).toContain('RATE_LIMITED');
    expect(await connect('10.0.0.3')).toBe(429);

    open.close();
    let again: Awaited<ReturnType<typeof stream>> | undefined;
    await eventually(async () => {
      const s = await stream();
      if (s.status === 200) return (again = s);
      s.close();
      return undefined;
    }, { what: 'an SSE stream from 10.0.0.3 once one ended' });
    again!.close();
    for (const s of sockets) (s as WebSocket).close();
  });
});
