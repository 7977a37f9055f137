/**
 * The floor for a history page: a plain node:http server that does what
 * Parley does for `room(name) { messages(first: 50) { edges { node { id
 * content author { login } } } } }` and nothing else: the same JWT check,
 * the same stores (so the same prepared statements at the same consistency),
 * and JSON out. No GraphQL. Run as a child process by startFloorProcess.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { Database } from '../src/db/cassandra/client.js';
import { createStores } from '../src/db/stores.js';
import { TokenService } from '../src/auth/tokens.js';
import { benchEnv } from './harness.js';
import { startChildServer, type ServerProcess } from './server-process.js';

export async function startFloorProcess(): Promise<ServerProcess> {
  return startChildServer(fileURLToPath(import.meta.url), { ...(await benchEnv()), PARLEY_FLOOR_CHILD: '1' });
}

if (process.env.PARLEY_FLOOR_CHILD) {
  const config = loadConfig(process.env);
  const db = new Database(config.cassandra, pino({ level: 'warn' }), config.cassandra.contactPoints);
  await db.connect();
  const stores = createStores(db);
  const tokens = await TokenService.create(config.auth, false);
  const server = createServer(async (req, res) => {
    try {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const session = token ? await tokens.verify(token) : null;
      const name = new URL(req.url ?? '/', 'http://floor').searchParams.get('room') ?? '';
      const room = session ? await stores.rooms.byName(name) : undefined;
      if (!session || !room || !room.participants.some((p) => p.login === session.login)) {
        res.writeHead(403).end('{}');
        return;
      }
      const page = await stores.roomMessages.page(room, 'older', null, 50, new Date());
      const edges = page.rows.map((m) => ({ node: { id: m.messageId, content: m.visible ? m.content : null, author: { login: m.author.login } } }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { room: { messages: { edges } } } }));
    } catch {
      res.writeHead(500).end('{}');
    }
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
  process.once('SIGTERM', () => server.close(() => void db.shutdown().then(() => process.exit(0))));
}
