/**
 * A graphql-ws client as a browser would open one, and subscriptions read as
 * async queues with deadlines (never sleeps).
 */
import { createClient, type Client, type CloseCode } from 'graphql-ws';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type ExecutionResult } from 'graphql';
import WebSocket from 'ws';
import type { App } from '../../src/app.js';
import { withDeadline } from './poll.js';

export interface WsClient extends Client {
  /** Resolves with the close event once the server closes the socket. */
  closed: Promise<{ code: number; reason: string }>;
  /** The client side's port once connected: which server process holds the other end can be looked up by it. */
  localPort: Promise<number>;
}

export function wsClient(app: App, token?: string): WsClient {
  let onClosed!: (e: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (onClosed = resolve));
  let onConnected!: (port: number) => void;
  const localPort = new Promise<number>((resolve) => (onConnected = resolve));
  const client = createClient({
    url: `${app.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: false,
    on: {
      connected: (socket) => onConnected((socket as WebSocket & { _socket: { localPort: number } })._socket.localPort),
      closed: (event) => {
        const e = event as { code: number; reason: string | Buffer };
        onClosed({ code: e.code, reason: String(e.reason) });
      },
    },
    onNonLazyError: () => {},
  }) as WsClient;
  client.closed = closed;
  client.localPort = localPort;
  return client;
}

/** Runs a query or mutation over the socket. */
export function wsRequest<TResult, TVariables>(
  client: Client,
  document: TypedDocumentNode<TResult, TVariables>,
  variables?: TVariables,
): Promise<ExecutionResult<TResult>> {
  return new Promise((resolve, reject) => {
    let result: ExecutionResult<TResult> | undefined;
    client.subscribe<TResult>(
      { query: print(document), variables: variables as Record<string, unknown> },
      {
        next: (value) => (result = value as ExecutionResult<TResult>),
        error: (err) =>
          Array.isArray(err) ? resolve({ errors: err } as ExecutionResult<TResult>) : reject(err),
        complete: () => resolve(result!),
      },
    );
  });
}

export interface Subscription<T> {
  /** The next event, or a failure after `timeoutMs`. */
  next(timeoutMs?: number): Promise<ExecutionResult<T>>;
  /** Resolves when the server completes the subscription. */
  completed: Promise<void>;
  /** Events received so far and not yet taken by next(). */
  pending(): number;
  unsubscribe(): void;
}

export function subscribe<TResult, TVariables>(
  client: Client,
  document: TypedDocumentNode<TResult, TVariables>,
  variables?: TVariables,
): Subscription<TResult> {
  const queue: ExecutionResult<TResult>[] = [];
  const waiters: Array<(r: ExecutionResult<TResult>) => void> = [];
  let complete!: () => void;
  let failed: unknown;
  const completed = new Promise<void>((resolve) => (complete = resolve));
  const unsubscribe = client.subscribe<TResult>(
    { query: print(document), variables: variables as Record<string, unknown> },
    {
      next: (value) => {
        const waiter = waiters.shift();
        if (waiter) waiter(value as ExecutionResult<TResult>);
        else queue.push(value as ExecutionResult<TResult>);
      },
      error: (err) => {
        failed = err;
        const asResult = { errors: Array.isArray(err) ? err : [{ message: String((err as Error)?.message ?? err) }] };
        for (const w of waiters.splice(0)) w(asResult as ExecutionResult<TResult>);
        queue.push(asResult as ExecutionResult<TResult>);
        complete();
      },
      complete: () => complete(),
    },
  );
  return {
    next(timeoutMs = 10_000) {
      const queued = queue.shift();
      if (queued) return Promise.resolve(queued);
      let waiter!: (r: ExecutionResult<TResult>) => void;
      const event = new Promise<ExecutionResult<TResult>>((resolve) => waiters.push((waiter = resolve)));
      return withDeadline(event, timeoutMs, `subscription event${failed ? ` (error: ${String(failed)})` : ''}`, () => {
        const i = waiters.indexOf(waiter);
        if (i >= 0) waiters.splice(i, 1);
      });
    },
    completed,
    pending: () => queue.length,
    unsubscribe,
  };
}

export type { CloseCode };
