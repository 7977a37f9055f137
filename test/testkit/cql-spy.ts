/**
 * Records the CQL an app instance sends to the real node while a test runs a
 * few operations: what was written, in how many batches of what size. It
 * wraps the instance's Database methods and passes every call through.
 */
import type { App } from '../../src/app.js';
import type { Statement } from '../../src/db/client.js';

export interface CqlRecord {
  kind: 'execute' | 'batch' | 'lwt';
  cql: string[];
}

export function recordCql(app: App) {
  const db = app.services.db;
  const records: CqlRecord[] = [];
  const { execute, batch, lwt } = db;
  db.execute = function (stmt: Statement, ...rest) {
    records.push({ kind: 'execute', cql: [stmt.cql] });
    return execute.call(this, stmt, ...rest);
  };
  db.batch = function (queries, ...rest) {
    records.push({ kind: 'batch', cql: queries.map((q) => q.stmt.cql) });
    return batch.call(this, queries, ...rest);
  };
  db.lwt = function (stmt, ...rest) {
    records.push({ kind: 'lwt', cql: [stmt.cql] });
    return lwt.call(this, stmt, ...rest);
  };
  return {
    records,
    /** Every statement sent, batched or not. */
    statements: () => records.flatMap((r) => r.cql.map((c) => c.replace(/\s+/g, ' ').trim())),
    /** Statements that change data. */
    writes: () =>
      records.flatMap((r) => r.cql.map((c) => c.replace(/\s+/g, ' ').trim())).filter((c) => /^(INSERT|UPDATE|DELETE)\b/i.test(c)),
    stop: () => {
      db.execute = execute;
      db.batch = batch;
      db.lwt = lwt;
    },
  };
}
