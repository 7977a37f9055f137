/**
 * The context of an operation received over HTTP (a POST, a GET or an SSE
 * stream): its session from the Authorization header, its client address and
 * its request id. Yoga builds it for what it serves, and the JSON fast path
 * for the prepared operations it runs itself: one function, so both see the
 * same caller.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { authenticate, bearerToken } from '../../auth/authenticate.js';
import { buildContext, type Context } from '../../resolvers/context.js';
import type { Services } from '../../resolvers/services.js';
import { clientAddress } from './client-address.js';
import { currentRequestScope } from './request-scope.js';

export async function httpContext(svc: Services, req: IncomingMessage): Promise<Context> {
  const session = await authenticate(svc, bearerToken(req.headers.authorization));
  const requestId = currentRequestScope()?.requestId ?? randomUUID();
  const ctx = buildContext(svc, session, clientAddress(req, svc.config.trustProxy), requestId);
  const lastEventId = req.headers['last-event-id'];
  if (typeof lastEventId === 'string' && lastEventId !== '') ctx.lastEventId = lastEventId;
  return ctx;
}
