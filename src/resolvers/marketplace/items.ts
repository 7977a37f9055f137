/**
 * Items: creating one (master and listings in one batch) and reading them by
 * id, by seller, by tag and from a seller's monthly history.
 */
import type { Context } from '../context.js';
import type { ItemRecord, ItemSummary } from '../../db/marketplace/items.js';
import { newTimeUuid } from '../../timeuuids.js';
import { keyedRunOf, recordIdFor } from '../idempotency/run.js';
import type { UserRecord } from '../../db/accounts/users.js';
import { badInput } from '../../errors.js';
import { Limits } from '../../limits.js';
import { connection, type Connection } from '../../pagination.js';
import { parseMonth } from '../../buckets.js';
import { isPossibleLogin, pageSize, requireLength } from '../../validation.js';
import { existingUser, normalizeLogin } from '../accounts/accounts.js';
import { requireViewer } from '../shared/guards.js';
import { eachVisibleOrNull } from '../shared/nodes.js';
import { afterId, idCursor, parseId } from './ids.js';
import { normalizeTag, validDescription, validIntIn, validItemName, validTags, validUnitPrice } from './validation.js';
import type { Page } from '../../db/cassandra/page.js';
import { itemLoader } from './reads.js';

/** An item as the API shows it: from the master row, a listing row (no description) or an event. */
export type ItemView = ItemSummary & { description?: string };

export interface CreateItemInput {
  name: string;
  description?: string | null;
  unitPrice: string;
  offeredUnits: number;
  startDate: Date;
  endDate: Date;
  tags?: readonly string[] | null;
}

export async function createItem(ctx: Context, input: CreateItemInput): Promise<ItemRecord> {
  const viewer = requireViewer(ctx);
  const name = validItemName('input.name', input.name);
  const description = validDescription('input.description', input.description ?? '');
  const unitPrice = validUnitPrice('input.unitPrice', input.unitPrice);
  const { min, max } = Limits.item.offeredUnits;
  const offeredUnits = validIntIn('input.offeredUnits', input.offeredUnits, min, max);
  const tags = validTags('input.tags', input.tags ?? []);
  const now = ctx.services.clock.now();
  if (input.endDate.getTime() <= input.startDate.getTime()) {
    throw badInput('input.endDate', 'input.endDate must be after input.startDate');
  }
  if (input.endDate.getTime() <= now.getTime()) throw badInput('input.endDate', 'input.endDate must be in the future');

  // Under an idempotency key the id is the key's: an item a first run wrote (its answer lost) is answered, not
  // written again over what happened to it since (its stock).
  const id = recordIdFor(ctx, () => newTimeUuid(now)).toString();
  if (keyedRunOf(ctx)) {
    const written = await ctx.services.stores.items.byId(id);
    if (written) return written;
  }
  const item = await ctx.services.stores.items.create({
    id,
    seller: viewer.login,
    name,
    description,
    unitPrice,
    offeredUnits,
    availableUnits: offeredUnits,
    startDate: input.startDate,
    endDate: input.endDate,
    tags,
    auctionFinished: false,
  });
  itemLoader(ctx).prime(item.id, item);
  return item;
}

export async function itemById(ctx: Context, rawId: string): Promise<ItemRecord | null> {
  requireViewer(ctx);
  return itemLoader(ctx).load(parseId('itemId', 'Item', rawId));
}

/** node(id:)'s items, by key: any signed-in viewer, as with item(itemId:). */
export function itemNodes(ctx: Context, keys: readonly string[]): Array<Promise<ItemRecord | null>> {
  return eachVisibleOrNull(keys, (key) => itemById(ctx, key));
}

const itemConnection = (page: Page<ItemSummary>): Connection<ItemView> =>
  connection<ItemView>(page.rows, (i) => idCursor(i.id), { hasNextPage: page.more });

/** An empty page (a new one each time: connection() keeps its rows). */
const noItems = (): Page<ItemSummary> => ({ rows: [], more: false });

/** The seller's listings of the last 30 days, newest first. */
export async function itemsBySeller(ctx: Context, login: string, first?: number | null, after?: string | null) {
  requireViewer(ctx);
  const seller = normalizeLogin(login);
  const limit = pageSize('first', first);
  const before = afterId('after', after);
  // A string that cannot be a login names nobody: no items, and no key Cassandra would refuse (empty, over 64 KiB).
  if (!isPossibleLogin(seller)) return itemConnection(noItems());
  return itemConnection(await ctx.services.stores.items.bySeller(seller, limit, before));
}

/** Items listed under a tag in the last 30 days, newest first. */
export async function itemsByTag(ctx: Context, tag: string, first?: number | null, after?: string | null) {
  requireViewer(ctx);
  const normalized = requireLength('tag', normalizeTag(tag), Limits.item.tag.min, Limits.item.tag.max);
  const limit = pageSize('first', first);
  const before = afterId('after', after);
  return itemConnection(await ctx.services.stores.items.byTag(normalized, limit, before));
}

/** Every item a seller listed in one UTC month ("2026-11"), kept after the listings expire. */
export async function itemHistory(ctx: Context, login: string, month: string, first?: number | null, after?: string | null) {
  requireViewer(ctx);
  const yearMonth = parseMonth(month.trim());
  if (yearMonth === undefined) throw badInput('month', 'month must be a month such as "2026-11"');
  const seller = normalizeLogin(login);
  const limit = pageSize('first', first);
  const before = afterId('after', after);
  if (!isPossibleLogin(seller)) return itemConnection(noItems());
  return itemConnection(await ctx.services.stores.items.history(seller, yearMonth, limit, before));
}

/** Listings do not carry the description (up to 5000 characters); load it from the master row when asked. */
export async function itemDescription(ctx: Context, item: ItemView): Promise<string> {
  if (item.description !== undefined) return item.description;
  return (await itemLoader(ctx).load(item.id))?.description ?? '';
}

/** Finished: sold out, or the sale period is over. */
export function isFinished(ctx: Context, item: ItemView): boolean {
  return item.auctionFinished || ctx.services.clock.now().getTime() >= item.endDate.getTime();
}

export function itemSeller(ctx: Context, item: ItemView): Promise<UserRecord> {
  return existingUser(ctx, item.seller);
}
