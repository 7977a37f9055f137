/**
 * WEB_CONCURRENCY: worker processes sharing one port (node:cluster), started
 * the way `npm start` starts them. Events and revocations must cross workers
 * through Redis, exactly as they cross instances.
 */
import { describe, expect, it } from 'vitest';
import { LogoutDocument, RoomEventsDocument } from './generated/graphql.js';
import { runAppProcessToExit, startAppProcess } from './testkit/app-process.js';
import { gqlOk } from './testkit/http.js';
import { eventually } from './testkit/poll.js';
import { post, roomWith } from './testkit/rooms.js';
import { signUp } from './testkit/users.js';
import { subscribe, wsClient } from './testkit/ws.js';
import { WS_CLOSE } from '../src/server/websocket.js';

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
      // Each WebSocket is a new connection, and the cluster hands connections to its workers in turn.
      const clients = [0, 1, 2, 3].map(() => wsClient(app, alice.token));
      const subs = clients.map((c) => subscribe(c, RoomEventsDocument, { roomName: room }));
      // Posts (each served by one worker) go on until every subscriber, on either worker, has seen one.
      await eventually(
        async () => {
          await post(app, alice, room, 'hello, workers');
          return subs.every((s) => s.pending() > 0);
        },
        { what: 'a post to reach the subscribers of both workers', timeoutMs: 20_000, intervalMs: 250 },
      );
      for (const s of subs) expect((await s.next()).data?.roomEvents.__typename).toBe('MessagePosted');
      await Promise.all(clients.map((c) => c.dispose()));

      // A logout served by one worker is known to both: every new connection with the token is refused.
      await gqlOk(app, LogoutDocument, {}, alice.token);
      const retries = [0, 1, 2, 3].map(() => wsClient(app, alice.token));
      for (const r of retries) expect((await r.closed).code).toBe(WS_CLOSE.UNAUTHORIZED);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
