/**
 * A subscription over Server-Sent Events, as a browser's EventSource-like
 * client runs one: a POST with `accept: text/event-stream`, read event by event.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type FormattedExecutionResult } from 'graphql';
import type { App } from '../../src/app.js';
import { withDeadline } from './poll.js';

export interface SseSubscription<T> {
  status: number;
  contentType: string | null;
  /** The next `next` event's payload; throws if the stream ends first. */
  next(): Promise<FormattedExecutionResult<T>>;
  /** Everything the server sends until it ends the stream. */
  rest(): Promise<string>;
  /** The client goes away. */
  close(): void;
  /** The id of the last event next() returned (what EventSource would send back as Last-Event-ID). */
  lastEventId(): string | undefined;
}

export async function sseSubscribe<T, V>(
  app: App,
  document: TypedDocumentNode<T, V> | string,
  variables: V,
  token?: string,
  headers: Record<string, string> = {},
): Promise<SseSubscription<T>> {
  const abort = new AbortController();
  const res = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify({ query: typeof document === 'string' ? document : print(document), variables }),
    signal: abort.signal,
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let lastId: string | undefined;
  const nextEvent = async (): Promise<FormattedExecutionResult<T>> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split('\n');
        const data = lines.find((l) => l.startsWith('data:'));
        if (block.includes('event: next') && data) {
          lastId = lines.find((l) => l.startsWith('id:'))?.slice(3).trim() ?? lastId;
          return JSON.parse(data.slice(5)) as FormattedExecutionResult<T>;
        }
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('the SSE stream ended');
      buffer += value;
    }
  };
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    /** The next `next` event's payload; fails when the stream ends first, or after the deadline (closing the stream). */
    next(timeoutMs = 10_000) {
      return withDeadline(nextEvent(), timeoutMs, 'SSE event', () => abort.abort());
    },
    async rest() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return buffer;
        buffer += value;
      }
    },
    close: () => abort.abort(),
    lastEventId: () => lastId,
  };
}
