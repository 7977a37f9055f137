/**
 * Storage interrupted at one chosen step: the first statement an app instance
 * sends whose CQL matches a pattern runs an action first (a look at the
 * tables at that moment) or fails with the driver's own timeout instead of
 * being sent, as if the node stopped answering at that moment. Everything
 * before and after goes to the real node. Whatever the test does, the hook is
 * gone after it.
 */
import { afterEach } from 'vitest';
import cassandra from 'cassandra-driver';
import type { App } from '../../../src/app.js';

const restores: Array<() => void> = [];
afterEach(() => {
  for (const restore of restores.splice(0)) restore();
});

/**
 * Runs `action` before the first statement matching `pattern` (which is then sent, unless `action` throws),
 * whether it goes out as a plain statement, an LWT or in a batch (which then waits or fails whole).
 */
export function onNextStatement(app: App, pattern: RegExp, action: () => Promise<void>): { fired: () => boolean } {
  const db = app.services.db;
  const { execute, lwt, batch } = db;
  let fired = false;
  const restore = () => {
    db.execute = execute;
    db.lwt = lwt;
    db.batch = batch;
  };
  const firstMatch = async (cql: string) => {
    if (fired || !pattern.test(cql)) return;
    fired = true;
    restore();
    await action();
  };
  db.execute = async function (stmt, ...rest) {
    await firstMatch(stmt.cql);
    return execute.call(this, stmt, ...rest);
  };
  db.lwt = async function (stmt, ...rest) {
    await firstMatch(stmt.cql);
    return lwt.call(this, stmt, ...rest);
  };
  db.batch = async function (queries, ...rest) {
    await firstMatch(queries.map((q) => q.stmt.cql).join('\n'));
    return batch.call(this, queries, ...rest);
  };
  restores.push(restore);
  return { fired: () => fired };
}

/** Fails the first statement matching `pattern` with a driver timeout, without sending it. */
export function failNextStatement(app: App, pattern: RegExp): { fired: () => boolean } {
  return onNextStatement(app, pattern, async () => {
    throw new cassandra.errors.OperationTimedOutError('injected: the node did not answer in time');
  });
}
