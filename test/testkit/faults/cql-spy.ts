/**
 * Records the CQL an app instance sends to the real node while a test runs a
 * few operations: what was written, in how many batches of what size. It
 * wraps the instance's Database methods and passes every call through (the
 * background jobs' own list reads go unrecorded). A spy
 * still recording when its test ends is stopped then, so a failed assertion
 * never leaves an instance wrapped for the next test.
 */
import { afterEach } from 'vitest';
import type { App } from '../../../src/app.js';
import type { Statement } from '../../../src/db/cassandra/client.js';

export interface CqlRecord {
  kind: 'execute' | 'batch' | 'lwt';
  cql: string[];
  params: unknown[][];
}

const recording = new Set<() => void>();

afterEach(() => {
  for (const stop of [...recording]) stop();
});

/**
 * The reads only an instance's background jobs send, each a whole partition of a list the job walks: the room
 * notices and cleanups by day, pending purchases by hour, revoked tokens by expiry day. They run on timers, so
 * one may fall inside the operation a test measures; the spy leaves them out.
 */
const BACKGROUND_READS = [
  /FROM pending_room_notices WHERE day = \?$/,
  /FROM pending_room_cleanups WHERE day = \?$/,
  /FROM pending_purchases WHERE hour = \?$/,
  /FROM revoked_tokens WHERE expiry_day = \?$/,
];
const isBackgroundRead = (cql: string) => BACKGROUND_READS.some((pattern) => pattern.test(cql.trim()));

export function recordCql(app: App) {
  const db = app.services.db;
  const records: CqlRecord[] = [];
  const { execute, batch, lwt } = db;
  function stop() {
    if (!recording.delete(stop)) return;
    db.execute = execute;
    db.batch = batch;
    db.lwt = lwt;
  }
  recording.add(stop);
  db.execute = function (stmt: Statement, params?: unknown[], ...rest) {
    if (!isBackgroundRead(stmt.cql)) records.push({ kind: 'execute', cql: [stmt.cql], params: [params ?? []] });
    return execute.call(this, stmt, params, ...rest);
  };
  db.batch = function (queries, ...rest) {
    records.push({ kind: 'batch', cql: queries.map((q) => q.stmt.cql), params: queries.map((q) => q.params) });
    return batch.call(this, queries, ...rest);
  };
  db.lwt = function (stmt, params, ...rest) {
    records.push({ kind: 'lwt', cql: [stmt.cql], params: [params] });
    return lwt.call(this, stmt, params, ...rest);
  };
  return {
    records,
    /** Every statement sent, batched or not. */
    statements: () => records.flatMap((r) => r.cql.map((c) => c.replace(/\s+/g, ' ').trim())),
    /** Every string parameter sent, batched or not. */
    stringParams: () => records.flatMap((r) => r.params.flat().filter((p): p is string => typeof p === 'string')),
    /** Statements that change data. */
    writes: () =>
      records.flatMap((r) => r.cql.map((c) => c.replace(/\s+/g, ' ').trim())).filter((c) => /^(INSERT|UPDATE|DELETE)\b/i.test(c)),
    stop,
  };
}

/** The string parameters sent to Cassandra while `run` runs. */
export async function stringParamsSentDuring(app: App, run: () => Promise<void>): Promise<string[]> {
  const spy = recordCql(app);
  try {
    await run();
  } finally {
    spy.stop();
  }
  return spy.stringParams();
}
