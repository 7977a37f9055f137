/**
 * Every request has an id: the one a trusted proxy sent in `x-request-id`, or
 * a new one. It is returned in the response's `x-request-id` and carried by
 * every log line written while serving the request (src/server/http/request-scope.ts).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener } from 'node:http';
import { lastHeaderValue } from './client-address.js';
import { runInRequestScope } from './request-scope.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** What a proxy's id may look like: short, and nothing that could forge a log line. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/;

export function requestIdFor(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const sent = lastHeaderValue(req.headers[REQUEST_ID_HEADER])?.split(',').at(-1)?.trim();
    if (sent && ACCEPTABLE_ID.test(sent)) return sent;
  }
  return randomUUID();
}

/** Runs each HTTP request inside its request scope, and tells the client its id. */
export function withRequestId(handler: RequestListener, trustProxy: boolean): RequestListener {
  return (req, res) => {
    const requestId = requestIdFor(req, trustProxy);
    res.setHeader(REQUEST_ID_HEADER, requestId);
    runInRequestScope({ requestId }, () => handler(req, res));
  };
}
