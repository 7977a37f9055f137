/**
 * The floor of every request scenario: a plain node:http server that does what
 * Parley does for each operation and nothing else. It authenticates the same
 * way (authenticate(): JWT check and revocation check), builds the same
 * context and calls the same use cases in src/resolvers/, so every CQL
 * statement (prepared, at the same consistency), rate-limit call and published
 * event is Parley's; then it writes the fields the scenario's query selects as
 * JSON. What it leaves out is GraphQL: parsing, validation, execution, limits.
 *
 * POST /<scenario> with the scenario's variables as the JSON body (the
 * GraphQL contenders get the same variables). Run as a child process by
 * startFloorProcess.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Context } from '../../../src/resolvers/context.js';
import { AppError } from '../../../src/errors.js';
import { login, me } from '../../../src/resolvers/accounts/accounts.js';
import { encodeMessageId } from '../../../src/resolvers/rooms/ids.js';
import { roomHistory, visibleContent } from '../../../src/resolvers/rooms/messages/messages.js';
import { postMessage } from '../../../src/resolvers/rooms/messages/posting.js';
import { distinctPeople, personAsUser } from '../../../src/resolvers/rooms/people.js';
import { chatRoomsOf, roomByName } from '../../../src/resolvers/rooms/rooms.js';
import { conversations } from '../../../src/resolvers/messenger/inbox.js';
import { participant } from '../../../src/resolvers/messenger/participants.js';
import { sendDirectMessage } from '../../../src/resolvers/messenger/send.js';
import { PRODUCTION_ENV } from '../remote-parley.js';
import { announceChild, childServices, contextFor, startChildServer, type ServerProcess } from './server-process.js';
import { benchEnv } from '../harness.js';

type Variables = Record<string, string>;

/** Each scenario's operation, answering exactly what its GraphQL document selects (see bench/kit/requests/scenarios.ts). */
const operations: Record<string, (ctx: Context, v: Variables) => Promise<unknown>> = {
  async history(ctx, v) {
    const room = await roomByName(ctx, v.roomName!);
    if (!room) return { room: null };
    const page = await roomHistory(ctx, room, { first: 50 });
    const edges = page.edges.map(({ node: m }) => ({
      node: { id: encodeMessageId(m), content: visibleContent(m), author: { login: personAsUser(ctx, m.author).login } },
    }));
    return { room: { messages: { edges } } };
  },
  async postMessage(ctx, v) {
    const m = await postMessage(ctx, { roomName: v.roomName!, content: v.content! });
    return { postMessage: { id: encodeMessageId(m), content: visibleContent(m) } };
  },
  async conversations(ctx) {
    const page = await conversations(ctx, { first: 50 });
    const edges = await Promise.all(
      page.edges.map(async ({ node: c }) => ({ node: { partner: { login: (await participant(ctx, c.partner)).login }, unreadCount: c.unreadCount } })),
    );
    return { conversations: { edges } };
  },
  async meRooms(ctx) {
    const user = await me(ctx);
    if (!user) return { me: null };
    const rooms = await chatRoomsOf(ctx, user);
    return { me: { login: user.login, chatRooms: rooms?.map((r) => ({ name: r.name, participantCount: distinctPeople(r.participants).length })) ?? null } };
  },
  async sendDirectMessage(ctx, v) {
    const m = await sendDirectMessage(ctx, v.to!, v.content!);
    return { sendDirectMessage: { id: m.id, content: m.content } };
  },
  async login(ctx, v) {
    const { token } = await login(ctx, v.login!, v.password!);
    return { login: { token } };
  },
};

export async function startFloorProcess(env: Record<string, string> = PRODUCTION_ENV, nodeArgs: string[] = []): Promise<ServerProcess> {
  return startChildServer(fileURLToPath(import.meta.url), { ...(await benchEnv(env)), PARLEY_FLOOR_CHILD: '1' }, nodeArgs);
}

async function body(req: IncomingMessage): Promise<Variables> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Variables) : {};
}

if (process.env.PARLEY_FLOOR_CHILD) {
  const services = await childServices();
  const server = createServer(async (req, res) => {
    try {
      const operation = operations[(req.url ?? '/').slice(1)];
      if (!operation) return void res.writeHead(404).end('{}');
      const data = await operation(await contextFor(services, req), await body(req));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    } catch (err) {
      // A refusal is a client error, as Parley's would be a GraphQL error; anything else is the floor's failure.
      const status = err instanceof AppError ? 400 : 500;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message }));
    }
  });
  server.listen(0, '127.0.0.1', () => void announceChild(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
}
