/**
 * WEB_CONCURRENCY: worker processes sharing one port (node:cluster), started
 * the way `npm start` starts them. Events and revocations must cross workers
 * through Redis, exactly as they cross instances.
 */
import { describe, expect, it } from 'vitest';
import { LogoutDocument, RoomEventsDocument } from '../generated/graphql.js';
import { pidServing, runAppProcessToExit, startAppProcess } from '../testkit/app-process.js';
import { gqlOk } from '../testkit/http.js';
import { eventually } from '../testkit/poll.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { signUp } from '../testkit/data/users.js';
import { subscribe, wsClient, type WsClient } from '../testkit/ws.js';
import { WS_CLOSE } from '../../src/server/live/websocket.js';

describe('WEB_CONCURRENCY', () => {
  it('refuses more than one worker without Redis, saying why and without a stack trace', async () => {
    const { code, stderr } = await runAppProcessToExit({ WEB_CONCURRENCY: '2' });
    expect(code).toBe(1);
    expect(stderr).toMatch(/WEB_CONCURRENCY above 1 needs REDIS_URL/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('runs two workers on one port that share live events and logouts through Redis, and stops cleanly', async () => {
    const server = await startAppProcess({ redis: true, env: { WEB_CONCURRENCY: '2' }, listeners: 2 });
    const { app } = server;
    try {
      expect(new Set(server.pids).size).toBe(2);
      const alice = await signUp(app);
      const room = await roomWith(app, alice);
      const port = Number(new URL(app.url).port);
      // Sockets until both workers hold some (the cluster hands connections to its workers in turn), each tied to
      // the worker holding its server side.
      const held: Array<{ client: WsClient; pid: number }> = [];
      await eventually(
        async () => {
          const client = wsClient(app, alice.token);
          const pid = await pidServing(await client.localPort, port, server.pids);
          if (pid === undefined) throw new Error('no worker holds the socket');
          held.push({ client, pid });
          return new Set(held.map((h) => h.pid)).size === 2 && held.length >= 4;
        },
        { what: 'sockets on both workers' },
      );
      const subs = held.map((h) => subscribe(h.client, RoomEventsDocument, { roomName: room }));
      // Posts (each served by one worker) go on until every subscriber, on either worker, has seen one.
      await eventually(
        async () => {
          await post(app, alice, room, 'hello, workers');
          return subs.every((s) => s.pending() > 0);
        },
        { what: 'a post to reach the subscribers of both workers', timeoutMs: 20_000, intervalMs: 250 },
      );
      for (const s of subs) expect((await s.next()).data?.roomEvents.__typename).toBe('MessagePosted');

      // A logout served by one worker closes the open sockets of the token on both: the worker that did not serve
      // it hears of it through Redis (an open socket is not checked against storage again).
      await gqlOk(app, LogoutDocument, {}, alice.token);
      const closes = await Promise.all(held.map(async (h) => ({ pid: h.pid, code: (await h.client.closed).code })));
      expect(closes.map((c) => c.code)).toEqual(held.map(() => WS_CLOSE.UNAUTHORIZED));
      expect(new Set(closes.map((c) => c.pid))).toEqual(new Set(server.pids));
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
