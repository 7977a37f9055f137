/**
 * Step 4 of a purchase, and the recovery that runs it for purchases bound by a
 * request that died before finishing. Completion is idempotent: every write in
 * it sets the same values again, so running it twice (request and recovery at
 * once, or recovery after a partial completion) is harmless.
 */
import type { ItemRecord } from '../../db/marketplace/items.js';
import type { PurchaseRecord, StoredPurchase } from '../../db/marketplace/purchases.js';
import { hourBucketsBetween } from '../../buckets.js';
import type { Services } from '../services.js';
import { purchaseAgeMs, UNBOUND_IS_FINAL_MS, RECOVERY_LOOKAHEAD_MS, RECOVERY_LOOKBACK_MS } from './timing.js';
import { publishItem } from './events.js';

/** Returns the completed purchase and the item as read after the bind (undefined if it is gone). */
export async function completePurchase(
  services: Services,
  purchase: StoredPurchase,
): Promise<{ purchase: PurchaseRecord; item: ItemRecord | undefined }> {
  const { stores, pubsub, logger } = services;
  await services.marketplace.hooks.beforeCompletion?.(purchase.id);
  // a. permanent (no TTL), COMPLETED, in the buyer's history: one logged batch.
  const completed = await stores.purchases.complete(purchase);
  // b. listings: read the item after the bind, so its stock includes this purchase.
  const item = await stores.items.byId(purchase.itemId);
  if (item) await stores.items.refreshListings(item);
  // c. only now is there nothing left for recovery to do.
  await stores.purchases.clearPending(purchase);
  if (item) {
    await publishItem(pubsub, item).catch((err) => logger.error({ err, itemId: item.id }, 'failed to publish item update'));
  }
  return { purchase: completed, item };
}

/**
 * Completes every bound purchase still pending. Reads the hour partitions of
 * pending_purchases that can still hold entries (24-hour TTL, one hour either
 * side for clock skew between instances): about 27 small reads, no scan.
 * - An hour that cannot be read (a timeout, too many tombstones in a busy
 *   hour) is logged and skipped: the other hours are still recovered, and the
 *   next run tries it again.
 * - An entry younger than the grace period belongs to a request that is most
 *   likely still running: it is left to that request, and costs no SERIAL read.
 * - A pending purchase that is not bound is left alone while its request may
 *   still bind it; once it is UNBOUND_IS_FINAL_MS old it never will be, and its
 *   entry is dropped so no run reads it again (its CREATED row expires).
 */
export async function recoverPendingPurchases(services: Services): Promise<number> {
  const { stores, clock, logger, config } = services;
  const runtime = services.marketplace;
  const now = clock.now().getTime();
  const graceMs = config.marketplace.recoveryGraceMs;
  let completed = 0;
  for (const hour of hourBucketsBetween(new Date(now - RECOVERY_LOOKBACK_MS), new Date(now + RECOVERY_LOOKAHEAD_MS))) {
    let pending: Array<{ purchaseId: string; itemId: string }>;
    try {
      await runtime.hooks.beforeRecoveryHour?.(hour);
      pending = await stores.purchases.pendingInHour(hour);
    } catch (err) {
      runtime.stats.recoveryHourFailures += 1;
      logger.error({ err, hour }, 'could not read an hour of pending purchases; skipped until the next run');
      continue;
    }
    for (const { purchaseId, itemId } of pending) {
      const age = purchaseAgeMs(services, purchaseId);
      if (age < graceMs) continue;
      try {
        // SERIAL: a bind still in flight is finished first, so "not bound" holds unless its request binds later.
        const bound = await stores.items.readBoundSerial(itemId, purchaseId);
        if (bound.quantity === null) {
          if (age >= UNBOUND_IS_FINAL_MS) await stores.purchases.dropPending(hour, purchaseId);
          continue;
        }
        const purchase = await stores.purchases.byId(purchaseId);
        if (!purchase) {
          logger.error({ purchaseId, itemId }, 'bound purchase has no purchase row (expired before completion)');
          continue;
        }
        await completePurchase(services, purchase);
        runtime.stats.recovered += 1;
        services.metrics.purchaseRecovered();
        completed += 1;
      } catch (err) {
        logger.error({ err, purchaseId, itemId }, 'failed to complete a pending purchase; will retry');
      }
    }
  }
  runtime.stats.recoveryRuns += 1;
  return completed;
}
