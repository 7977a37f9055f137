/**
 * What is known about the request being served, wherever in its call tree a
 * line is logged: an AsyncLocalStorage entered once per HTTP request and once
 * per WebSocket operation, read by the logger's mixin, so every log line
 * written while serving a request carries its id without passing it around.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestScope {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestScope>();

export function runInRequestScope<T>(scope: RequestScope, fn: () => T): T {
  return storage.run(scope, fn);
}

export function currentRequestScope(): RequestScope | undefined {
  return storage.getStore();
}

/** Fields added to every log line: the request's id when a request is being served. */
export function requestLogFields(): Record<string, string> {
  const scope = storage.getStore();
  return scope ? { reqId: scope.requestId } : {};
}
