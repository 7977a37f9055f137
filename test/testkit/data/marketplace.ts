/** Marketplace helpers: items created through the API, and direct reads of what only CQL can show (TTLs). */
import type { App } from '../../../src/app.js';
import { TimeUuid } from '../../../src/db/cassandra/client.js';
import { CreateItemDocument, type CreateItemInput } from '../../generated/graphql.js';
import { gqlOk } from '../http.js';
export { cqlRow, cqlRows } from '../cql.js';
import type { TestUser } from './users.js';
import { keyOf } from '../ids.js';

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

/** The timeuuid key of an item or purchase id the API gave (global), for reading its rows in CQL. */
export const uuid = (id: string) => TimeUuid.fromString(keyOf(id));
