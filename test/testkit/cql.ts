/**
 * Raw CQL against the app's own keyspace, for what only storage shows (TTLs,
 * WRITETIMEs, pending entries, rows the API filters out): the one place tests
 * reach past the API into the tables.
 */
import type { App } from '../../src/app.js';

/** Every row a query returns (prepared, so values bind by type); none for a write. */
export async function cqlRows(app: App, query: string, params: unknown[] = []) {
  return (await app.services.db.client.execute(query, params, { prepare: true })).rows ?? [];
}

/** The first row a query returns, or undefined. */
export async function cqlRow(app: App, query: string, params: unknown[] = []) {
  return (await cqlRows(app, query, params))[0];
}
