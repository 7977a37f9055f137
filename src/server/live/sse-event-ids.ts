/**
 * Server-Sent Events carry each event's cursor as its SSE id, so a browser's
 * EventSource that reconnects sends it back as Last-Event-ID and the feed
 * resumes there (roomEvents reads it when no `after` is given).
 *
 * Yoga writes each result as `data: <stringify(result)>`; a result's own
 * stringify may end with "\nid: <cursor>", which makes the id line of the
 * same SSE event. Cursors are base64url: never a newline in them.
 */
import { isAsyncIterable, type Plugin as YogaPlugin } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';

/** The cursor of a subscription's event: the `cursor` its one root field selected, if any. */
function cursorOf(result: ExecutionResult): string | undefined {
  const root = result.data && Object.values(result.data)[0];
  const cursor = root && typeof root === 'object' ? (root as { cursor?: unknown }).cursor : undefined;
  return typeof cursor === 'string' && /^[A-Za-z0-9_-]+$/.test(cursor) ? cursor : undefined;
}

function withEventId(result: ExecutionResult): string {
  const cursor = cursorOf(result);
  return cursor ? `${JSON.stringify(result)}\nid: ${cursor}` : JSON.stringify(result);
}

/**
 * Each result wrapped with that stringify. By hand, not an async generator: a
 * generator waiting for the next event could not be ended until one came, and
 * a client that goes away must release its listener at once.
 */
function eventsWithIds(results: AsyncIterable<ExecutionResult>): AsyncIterableIterator<ExecutionResult> {
  const source = results[Symbol.asyncIterator]();
  const done = (value?: unknown) => Promise.resolve({ value, done: true } as IteratorResult<ExecutionResult>);
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    // A result may be shared with other subscribers (src/server/live/shared-execution.ts): each gets its own wrapper.
    next: () => source.next().then((r) => (r.done ? r : { value: { ...r.value, stringify: withEventId } as ExecutionResult, done: false })),
    return: (value?: unknown) => (source.return ? source.return(value) : done(value)),
    throw: (err?: unknown) => (source.throw ? source.throw(err) : Promise.reject(err)),
  };
}

export function useSseEventIds(): YogaPlugin {
  return {
    onResultProcess: ({ request, result, setResult }) => {
      if (isAsyncIterable(result) && request.headers.get('accept')?.includes('text/event-stream')) {
        setResult(eventsWithIds(result as AsyncIterable<ExecutionResult>) as never);
      }
    },
  };
}
