/**
 * Storage failing at one chosen step: the first statement an app instance
 * sends whose CQL matches a pattern fails with the driver's own timeout
 * instead of being sent, as if the node stopped answering at that moment.
 * Everything before and after goes to the real node. Whatever the test does,
 * the fault is gone after it.
 */
import { afterEach } from 'vitest';
import cassandra from 'cassandra-driver';
import type { App } from '../../src/app.js';

const restores: Array<() => void> = [];
afterEach(() => {
  for (const restore of restores.splice(0)) restore();
});

export function failNextStatement(app: App, pattern: RegExp): { fired: () => boolean } {
  const db = app.services.db;
  const { execute } = db;
  let fired = false;
  const restore = () => {
    db.execute = execute;
  };
  db.execute = function (stmt, ...rest) {
    if (!fired && pattern.test(stmt.cql)) {
      fired = true;
      restore();
      return Promise.reject(new cassandra.errors.OperationTimedOutError('injected: the node did not answer in time'));
    }
    return execute.call(this, stmt, ...rest);
  };
  restores.push(restore);
  return { fired: () => fired };
}
