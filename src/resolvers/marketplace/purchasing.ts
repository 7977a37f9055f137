/**
 * The AlleDeals purchase for a given purchase id, steps 1–3 here and step 4 in
 * completion.ts (buy-item.ts chooses the id):
 *   1. checks against the item as read;
 *   2. the purchase written with a 24-hour TTL, status CREATED, and indexed as pending;
 *   3. bound to the item by an LWT on its stock: UPDATE ... IF available_units = <read>.
 * Step 4 failing does not fail the purchase: once bound it is answered with
 * status CREATED, and recovery completes it.
 * A lost race is retried against the stock the LWT returned, with jitter, up to
 * config.marketplace.bindAttempts times; stock running out ends it with
 * NOT_ENOUGH_UNITS, the bound with CONFLICT. Nothing can oversell: a bind only
 * applies against the exact stock it subtracted from.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Context } from '../context.js';
import type { ItemRecord } from '../../db/marketplace/items.js';
import type { PurchaseRecord, StoredPurchase } from '../../db/marketplace/purchases.js';
import { newTimeUuid, timeUuidDate } from '../../timeuuids.js';
import { AppError, conflict, ErrorCode, forbidden, notFound } from '../../errors.js';
import type { Services } from '../services.js';
import { requireViewer } from '../shared/guards.js';
import { completePurchase } from './completion.js';
import { BIND_DEADLINE_MS, purchaseAgeMs } from './timing.js';
import { itemLoader } from './reads.js';

const notEnoughUnits = (available: number, quantity: number) =>
  new AppError(
    ErrorCode.NOT_ENOUGH_UNITS,
    available === 0 ? 'The item is sold out' : `Only ${available} unit(s) left; ${quantity} requested`,
    { availableUnits: available },
  );

/**
 * AUCTION_FINISHED exactly when now is outside [startDate, endDate). A sold-out
 * item within its sale period is NOT_ENOUGH_UNITS, not AUCTION_FINISHED as the
 * spec's check order would have it: "0 left" is what a buyer who lost the race
 * needs to hear, the same answer as when the stock runs out during the bind.
 */
function requireOnSale(item: ItemRecord, now: Date): void {
  if (now.getTime() < item.startDate.getTime()) {
    throw new AppError(ErrorCode.AUCTION_FINISHED, 'The sale of this item has not started yet');
  }
  if (now.getTime() >= item.endDate.getTime()) {
    throw new AppError(ErrorCode.AUCTION_FINISHED, 'The sale of this item is over');
  }
}

export const newPurchaseId = (ctx: Context) => newTimeUuid(ctx.services.clock.now()).toString();

/** What a caller learns when a purchase fails: whether it may have bound before the failure. */
export interface PurchaseProgress {
  mayBeBound: boolean;
}

/** Steps 1–4 for a purchase with a given id (a new one, or the one a clientPurchaseId claimed). */
export async function runPurchase(
  ctx: Context,
  itemId: string,
  quantity: number,
  purchaseId: string,
  progress: PurchaseProgress,
): Promise<PurchaseRecord> {
  const viewer = requireViewer(ctx);
  const { stores, clock } = ctx.services;

  // 1. checks, in the order (but see requireOnSale for a sold-out item).
  const item = await stores.items.byId(itemId);
  if (!item) throw notFound('Item');
  requireOnSale(item, clock.now());
  if (item.seller === viewer.login) throw forbidden('You cannot buy your own item');
  if (quantity > item.availableUnits) throw notEnoughUnits(item.availableUnits, quantity);

  // 2. the purchase, CREATED, expiring unless it binds.
  const purchase = await stores.purchases.create({
    id: purchaseId,
    itemId,
    buyer: viewer.login,
    seller: item.seller,
    unitPrice: item.unitPrice,
    quantity,
    status: 'CREATED',
    createdAt: timeUuidDate(purchaseId),
  });

  // 3. bind. From here on the purchase is the buyer's: recovery completes it if we die.
  await bind(ctx.services, item, purchase, progress);
  await ctx.services.marketplace.hooks.afterBind?.(purchase.id);
  return finishBound(ctx, purchase);
}

/**
 * 4. completes a bound purchase. A failure here must not read as "nothing
 * bought" (a retry would buy twice): the purchase is bound, so it is answered
 * with, CREATED, and left to recovery.
 */
export async function finishBound(ctx: Context, purchase: StoredPurchase): Promise<PurchaseRecord> {
  // The item read before the bind is stale now; completion reads it afresh, so Purchase.item reuses that read.
  const items = itemLoader(ctx).clear(purchase.itemId);
  try {
    const { purchase: completed, item } = await completePurchase(ctx.services, purchase);
    if (item) items.prime(item.id, item);
    return completed;
  } catch (err) {
    ctx.services.logger.error(
      { err, purchaseId: purchase.id, itemId: purchase.itemId },
      'purchase bound but not completed; recovery will complete it',
    );
    return purchase;
  }
}

/** Full jitter on an exponential ceiling (10 ms doubling, at most 200 ms): losers spread out instead of colliding again. */
const backoffMs = (attempt: number) => Math.random() * Math.min(200, 10 * 2 ** Math.min(attempt, 5));

async function bind(services: Services, item: ItemRecord, purchase: StoredPurchase, progress: PurchaseProgress): Promise<void> {
  const runtime = services.marketplace;
  const maxAttempts = services.config.marketplace.bindAttempts;
  let available = item.availableUnits;
  for (let attempt = 1; ; attempt++) {
    runtime.stats.maxBindAttempts = Math.max(runtime.stats.maxBindAttempts, attempt);
    await runtime.hooks.beforeBind?.(purchase.id, attempt);
    // Past the deadline nobody may bind it: recovery and retries then treat "not bound" as final.
    if (purchaseAgeMs(services, purchase.id) >= BIND_DEADLINE_MS) {
      runtime.stats.bindConflicts += 1;
      await abandon(services, purchase);
      throw conflict('The purchase took too long to go through; nothing was bought; please try again');
    }
    // Until Cassandra answers "not applied", this attempt may have bound the purchase.
    progress.mayBeBound = true;
    const outcome = await services.stores.items.bind(item.id, purchase.id, purchase.quantity, available);
    if (outcome.applied) return;
    progress.mayBeBound = false;
    if (outcome.availableUnits === null) throw notFound('Item');
    // Another buyer won: the LWT answered with the stock as it is now.
    available = outcome.availableUnits;
    if (available < purchase.quantity) {
      await abandon(services, purchase);
      throw notEnoughUnits(available, purchase.quantity);
    }
    if (attempt >= maxAttempts) {
      runtime.stats.bindConflicts += 1;
      await abandon(services, purchase);
      throw conflict(`Too many buyers at once: gave up after ${maxAttempts} attempts; please try again`);
    }
    runtime.stats.bindRetries += 1;
    await delay(backoffMs(attempt));
  }
}

/**
 * The purchase is certainly not bound (every attempt was answered "not
 * applied", a SERIAL read included) and never will be: drop its pending entry
 * so recovery does not look at it again. Its CREATED row expires with its TTL.
 */
async function abandon(services: Services, purchase: StoredPurchase): Promise<void> {
  await services.stores.purchases
    .clearPending(purchase)
    .catch((err) => services.logger.warn({ err, purchaseId: purchase.id }, 'could not drop a pending entry; it expires'));
}
