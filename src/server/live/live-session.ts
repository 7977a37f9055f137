/**
 * A subscription lives no longer than the session that opened it: once its
 * token is revoked (logout on any instance) or expires, the stream sends one
 * UNAUTHENTICATED error and ends. WebSockets are also closed proactively
 * (src/server/live/websocket.ts); this covers SSE and every other transport, per
 * event (src/server/live/live-subscriptions.ts applies it).
 */
import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Context } from '../../resolvers/context.js';
import { ErrorCode, withoutStackTrace } from '../../errors.js';

export function sessionEnded(ctx: Context): string | null {
  const viewer = ctx.viewer;
  if (!viewer) return null;
  if (ctx.services.revocations.isRevoked(viewer.jti)) return 'Your session was revoked (logged out)';
  if (viewer.expiresAt.getTime() <= Date.now()) return 'Your session expired';
  return null;
}

/** The last result of a subscription whose session has ended, or null while the session holds. */
export function sessionEndResult(ctx: Context): ExecutionResult | null {
  const reason = sessionEnded(ctx);
  if (!reason) return null;
  return { errors: [withoutStackTrace(() => new GraphQLError(reason, { extensions: { code: ErrorCode.UNAUTHENTICATED } }))] };
}
