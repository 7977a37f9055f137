/**
 * The GraphQL context, built in one typed function for HTTP and WebSocket alike.
 */
import type { Session } from '../auth/tokens.js';
import type { Services } from './services.js';

/**
 * Values kept for one request or one live event, by key: each domain's DataLoaders, made on first use by its
 * reads.ts through perRequest (src/resolvers/shared/per-request.ts). Nothing is cached across requests.
 */
export type RequestValues = Map<symbol, unknown>;

export interface Context {
  services: Services;
  /** The authenticated session, or null for an anonymous caller (fields that read it: src/schema/shared/viewer-dependent.ts). */
  viewer: Session | null;
  clientAddress: string;
  /** This request's id (HTTP) or this operation's (WebSocket), as in the logs and the x-request-id header. */
  requestId: string;
  loaders: RequestValues;
  /** An SSE client's Last-Event-ID header: the cursor a reconnecting EventSource resumes from. */
  lastEventId?: string;
  /**
   * Set on the context a live event is executed with (contextForEvent): `loaders` are that event's, shared by
   * every subscriber who executes it, and fresh for it already.
   */
  eventLoaders?: RequestValues;
}

export function buildContext(
  services: Services,
  session: Session | null,
  clientAddress: string,
  requestId: string,
): Context {
  return {
    services,
    viewer: session,
    clientAddress,
    requestId,
    loaders: new Map(),
  };
}

/**
 * Subscriptions share one context for their whole life; give each event fresh
 * loaders so a user renamed an hour ago is not served from a stale cache. An
 * event executed with contextForEvent keeps the event's own.
 */
export function refreshLoaders(ctx: Context): void {
  ctx.loaders = ctx.eventLoaders ?? new Map();
}

/**
 * A subscriber's context for executing one live event, with `loaders` that
 * every subscriber executing that event shares: whoever the viewer, the
 * event's rows (a poll's votes, a room's readers and participants, a
 * forwarded original) are read once, and each subscriber's execution answers
 * and authorizes from them for its own viewer. Sound because every loader is
 * keyed by what it reads, never by who asks (viewerReactions carries the login
 * in its key: src/resolvers/rooms/reads.ts). Everything else is read through to the subscriber's context.
 */
export function contextForEvent(ctx: Context, loaders: RequestValues): Context {
  const eventContext = Object.create(ctx) as Context;
  eventContext.loaders = loaders;
  eventContext.eventLoaders = loaders;
  return eventContext;
}
