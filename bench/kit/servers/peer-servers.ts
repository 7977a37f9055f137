/**
 * Peer servers for the request scenarios (issue 12): Parley's own Pothos
 * schema, resolvers and context, mounted in Apollo Server (its standalone
 * node:http server) and in Mercurius (on Fastify, with its graphql-jit
 * compilation after the first run of a query). They get the same services
 * and authentication as Parley, and none of its plugins (limits, metrics,
 * error masking): what differs is the GraphQL server around the same schema.
 * Both are devDependencies, used by the bench only.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Context } from '../../../src/resolvers/context.js';
import { schema } from '../../../src/schema/index.js';
import type { Services } from '../../../src/resolvers/services.js';
import { PRODUCTION_ENV } from '../remote-parley.js';
import { announceChild, childServices, contextFor, startChildServer, type ServerProcess } from './server-process.js';
import { benchEnv } from '../harness.js';

export type Peer = 'apollo' | 'mercurius';

export async function startPeerProcess(peer: Peer, env: Record<string, string> = PRODUCTION_ENV, nodeArgs: string[] = []): Promise<ServerProcess> {
  return startChildServer(fileURLToPath(import.meta.url), { ...(await benchEnv(env)), PARLEY_PEER_CHILD: peer }, nodeArgs);
}

async function startApollo(services: Services): Promise<string> {
  const { ApolloServer } = await import('@apollo/server');
  const { startStandaloneServer } = await import('@apollo/server/standalone');
  const server = new ApolloServer<Context>({ schema });
  const { url } = await startStandaloneServer(server, {
    listen: { port: 0, host: '127.0.0.1' },
    context: ({ req }) => contextFor(services, req),
  });
  return new URL(url).origin;
}

async function startMercurius(services: Services): Promise<string> {
  const { default: Fastify } = await import('fastify');
  const { default: mercurius } = await import('mercurius');
  const app = Fastify({ logger: false });
  await app.register(mercurius, {
    schema,
    jit: 1,
    context: (request) => contextFor(services, request.raw),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

const peer = process.env.PARLEY_PEER_CHILD as Peer | undefined;
if (peer) {
  const services = await childServices();
  void announceChild(peer === 'apollo' ? await startApollo(services) : await startMercurius(services));
}
