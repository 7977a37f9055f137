/**
 * A subscription lives no longer than the session that opened it: once its
 * token is revoked (logout on any instance) or expires, the stream sends one
 * UNAUTHENTICATED error and ends. WebSockets are also closed proactively
 * (src/app.ts); this covers SSE and every other transport, per event.
 */
import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Context } from '../context.js';
import { ErrorCode } from '../errors.js';
import { transformStream } from '../pubsub/pubsub.js';

export function sessionEnded(ctx: Context): string | null {
  const viewer = ctx.viewer;
  if (!viewer) return null;
  if (ctx.services.revocations.isRevoked(viewer.jti)) return 'Your session was revoked (logged out)';
  if (viewer.expiresAt.getTime() <= Date.now()) return 'Your session expired';
  return null;
}

/** Wraps a subscription's results: once the session has ended, one UNAUTHENTICATED error, then the end. */
export function endWithSession(
  source: AsyncIterable<ExecutionResult>,
  ctx: Context,
): AsyncIterableIterator<ExecutionResult> {
  return transformStream<ExecutionResult, ExecutionResult>(source[Symbol.asyncIterator](), (result) => {
    const reason = sessionEnded(ctx);
    if (!reason) return { emit: result };
    return { emit: { errors: [new GraphQLError(reason, { extensions: { code: ErrorCode.UNAUTHENTICATED } })] }, end: true };
  });
}
