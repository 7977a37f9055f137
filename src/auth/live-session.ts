/**
 * A subscription lives no longer than the session that opened it: once its
 * token is revoked (logout on any instance) or expires, the stream sends one
 * UNAUTHENTICATED error and ends. WebSockets are also closed proactively
 * (src/app.ts); this covers SSE and every other transport, per event.
 */
import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Context } from '../context.js';
import { ErrorCode } from '../errors.js';

export function sessionEnded(ctx: Context): string | null {
  const viewer = ctx.viewer;
  if (!viewer) return null;
  if (ctx.services.revocations.isRevoked(viewer.jti)) return 'Your session was revoked (logged out)';
  if (viewer.expiresAt.getTime() <= Date.now()) return 'Your session expired';
  return null;
}

/**
 * Wraps a subscription's results. A hand-written iterator, not an async
 * generator: a generator waiting for its next event cannot be returned, so a
 * client's unsubscribe would hang until the next event arrived.
 */
export function endWithSession(
  source: AsyncIterable<ExecutionResult>,
  ctx: Context,
): AsyncIterableIterator<ExecutionResult> {
  const inner = source[Symbol.asyncIterator]();
  let ended = false;
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      if (ended) return { value: undefined, done: true };
      const result = await inner.next();
      if (result.done) return result;
      const reason = sessionEnded(ctx);
      if (!reason) return result;
      ended = true;
      await inner.return?.();
      return {
        value: { errors: [new GraphQLError(reason, { extensions: { code: ErrorCode.UNAUTHENTICATED } })] },
        done: false,
      };
    },
    async return() {
      ended = true;
      await inner.return?.();
      return { value: undefined, done: true };
    },
    async throw(err) {
      ended = true;
      await inner.return?.();
      throw err;
    },
  };
  return iterator;
}
