import type { IncomingMessage } from 'node:http';

/**
 * The address a request came from. Behind one trusted proxy (TRUST_PROXY) the
 * rightmost X-Forwarded-For entry is the one our own proxy appended; entries
 * left of it are whatever the client sent, so they are never believed.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const last = lastHeaderValue(req.headers['x-forwarded-for'])?.split(',').at(-1)?.trim();
    if (last) return last;
  }
  return req.socket.remoteAddress ?? 'unknown';
}

export function lastHeaderValue(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header.join(',') : header;
}
