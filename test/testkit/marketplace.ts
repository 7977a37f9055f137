/** Marketplace helpers: items created through the API, and direct reads of what only CQL can show (TTLs). */
import type { App } from '../../src/app.js';
import { TimeUuid } from '../../src/db/cassandra/client.js';
import { CreateItemDocument, type CreateItemInput } from '../generated/graphql.js';
import { gqlOk } from './http.js';
import type { TestUser } from './users.js';

const HOUR = 3_600_000;

/** An item on sale from an hour ago until tomorrow (by `now`, the app's clock). */
export function itemInput(overrides: Partial<CreateItemInput> = {}, now = new Date()): CreateItemInput {
  return {
    name: 'Vintage lamp',
    description: 'Brass, works',
    unitPrice: '19.99',
    offeredUnits: 10,
    startDate: new Date(now.getTime() - HOUR).toISOString(),
    endDate: new Date(now.getTime() + 24 * HOUR).toISOString(),
    tags: ['home'],
    ...overrides,
  };
}

export async function createItem(app: App, seller: TestUser, overrides: Partial<CreateItemInput> = {}, now?: Date) {
  return (await gqlOk(app, CreateItemDocument, { input: itemInput(overrides, now) }, seller.token)).createItem;
}

/** One row read straight from Cassandra (TTLs, WRITETIMEs and pending entries are not in the API). */
export async function cqlRow(app: App, query: string, params: unknown[]) {
  const rs = await app.services.db.client.execute(query, params, { prepare: true });
  return rs.first() ?? undefined;
}

export async function cqlRows(app: App, query: string, params: unknown[]) {
  return (await app.services.db.client.execute(query, params, { prepare: true })).rows;
}

export const uuid = (id: string) => TimeUuid.fromString(id);
