/**
 * Which web pages may call Parley from another origin (CORS_ORIGINS), for
 * HTTP requests and WebSocket upgrades alike. Production allows none unless
 * configured; development allows any, so a frontend on another port just
 * works. Tokens travel in the Authorization header, never in cookies, so
 * credentials are never allowed.
 */
import type { IncomingMessage } from 'node:http';
import type { CORSOptions } from 'graphql-yoga';
import type { Config } from '../../config.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { PREFLIGHT_HEADERS } from './files/uploads.js';

export interface OriginPolicy {
  /** True for a request with no Origin (not a browser), a same-origin one, or an allowed origin. */
  allows(origin: string | undefined, host: string | undefined): boolean;
}

export function originPolicy(config: Pick<Config, 'corsOrigins'>): OriginPolicy {
  const allowed = config.corsOrigins;
  return {
    allows(origin, host) {
      if (!origin) return true;
      if (allowed === 'any' || allowed.includes(origin)) return true;
      return isSameOrigin(origin, host);
    },
  };
}

/** A page served by this server (GraphiQL) talks to it from its own origin. */
function isSameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** Yoga's CORS answer for one request: headers only for an allowed cross-origin caller. */
export function corsFor(policy: OriginPolicy) {
  return (request: Request): CORSOptions => {
    const origin = request.headers.get('origin') ?? undefined;
    if (!origin || !policy.allows(origin, request.headers.get('host') ?? undefined)) return false;
    return {
      origin,
      credentials: false,
      methods: ['GET', 'POST', 'OPTIONS'],
      allowedHeaders: ['authorization', 'content-type', 'accept', REQUEST_ID_HEADER, ...PREFLIGHT_HEADERS],
      exposedHeaders: [REQUEST_ID_HEADER],
      maxAge: 600,
    };
  };
}

/** For the WebSocket server's verifyClient: the upgrade's Origin against the same policy. */
export function allowsUpgrade(policy: OriginPolicy, req: IncomingMessage): boolean {
  return policy.allows(req.headers.origin, req.headers.host);
}
