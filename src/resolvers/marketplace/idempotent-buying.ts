/**
 * buyItem with a clientPurchaseId: at most one purchase per buyer and id
 * within 24 hours, however many attempts race or retry.
 *
 * The first attempt claims the id (an LWT INSERT IF NOT EXISTS) for a
 * purchase id, and buys under that id. Any other attempt finds the claim and
 * answers with that purchase: at once when it is COMPLETED, and when it is
 * bound but not completed (its request died, or is finishing) by completing
 * it itself, which is idempotent. It never binds the claimed purchase itself:
 * the bind LWT is conditioned on the stock only, so two binds of one purchase
 * id would take its units twice. While the claimed purchase is not bound it
 * waits for the first attempt, polling plain reads, until one of these:
 * - the first attempt failed and released the claim (it bought nothing): the
 *   id is claimed anew and this attempt buys;
 * - the claimed purchase is UNBOUND_IS_FINAL_MS old and still not bound: no
 *   request binds past BIND_DEADLINE_MS, so it never will be; the claim is
 *   moved to a new purchase, which this attempt buys;
 * - DUPLICATE_WAIT_MS pass: CONFLICT, "still in progress, retry with the same id".
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Context } from '../context.js';
import type { PurchaseClaim } from '../../db/marketplace/purchase-claims.js';
import type { PurchaseRecord } from '../../db/marketplace/purchases.js';
import { badInput, conflict } from '../../errors.js';
import { Limits } from '../../limits.js';
import { DUPLICATE_WAIT_MS, purchaseAgeMs, SETTLE_MS, UNBOUND_IS_FINAL_MS } from './timing.js';
import { finishBound, newPurchaseId, runPurchase, type PurchaseProgress } from './purchasing.js';

const inProgress = () =>
  conflict('A purchase with this clientPurchaseId is still in progress; retry with the same clientPurchaseId to learn its outcome');

export async function buyOnce(
  ctx: Context,
  buyer: string,
  clientId: string,
  wanted: { itemId: string; quantity: number },
): Promise<PurchaseRecord> {
  const { purchaseClaims } = ctx.services.stores;
  const ttl = Limits.purchase.clientPurchaseIdTtlSeconds;
  const waitUntil = Date.now() + DUPLICATE_WAIT_MS;
  for (;;) {
    const proposal: PurchaseClaim = { purchaseId: newPurchaseId(ctx), ...wanted };
    const { claimed, claim } = await purchaseClaims.claim(buyer, clientId, proposal, ttl);
    if (claimed) return buyClaimed(ctx, buyer, clientId, proposal);
    if (claim.itemId !== wanted.itemId || claim.quantity !== wanted.quantity) {
      throw badInput('clientPurchaseId', 'clientPurchaseId was already used for another purchase (a different item or quantity)');
    }
    const outcome = await awaitClaimed(ctx, buyer, clientId, claim, waitUntil);
    if (outcome.purchase) return outcome.purchase;
    if (outcome.stale) {
      const fresh: PurchaseClaim = { purchaseId: newPurchaseId(ctx), ...wanted };
      if (await purchaseClaims.takeOver(buyer, clientId, claim.purchaseId, fresh, ttl)) return buyClaimed(ctx, buyer, clientId, fresh);
    }
    // The claim was released or moved meanwhile: claim again, within the wait.
    if (Date.now() >= waitUntil) throw inProgress();
  }
}

/** Buys the claimed purchase; if that fails having certainly bought nothing, releases the id for a retry. */
async function buyClaimed(ctx: Context, buyer: string, clientId: string, claim: PurchaseClaim): Promise<PurchaseRecord> {
  const progress: PurchaseProgress = { mayBeBound: false };
  try {
    return await runPurchase(ctx, claim.itemId, claim.quantity, claim.purchaseId, progress);
  } catch (err) {
    if (await certainlyUnbound(ctx, claim, progress)) {
      await ctx.services.stores.purchaseClaims
        .release(buyer, clientId, claim.purchaseId)
        .catch((e) => ctx.services.logger.warn({ err: e, purchaseId: claim.purchaseId }, 'could not release a clientPurchaseId; a retry takes it over later'));
    }
    throw err;
  }
}

/** This request's attempts are over: a SERIAL read (finishing any bind in flight) tells whether one applied. */
async function certainlyUnbound(ctx: Context, claim: PurchaseClaim, progress: PurchaseProgress): Promise<boolean> {
  if (!progress.mayBeBound) return true;
  try {
    return (await ctx.services.stores.items.readBoundSerial(claim.itemId, claim.purchaseId)).quantity === null;
  } catch {
    return false;
  }
}

/** Waits for the purchase another attempt claimed; see the file comment for the outcomes. */
async function awaitClaimed(
  ctx: Context,
  buyer: string,
  clientId: string,
  claim: PurchaseClaim,
  waitUntil: number,
): Promise<{ purchase?: PurchaseRecord; stale?: boolean }> {
  const { stores } = ctx.services;
  let checkedBound = false;
  for (let poll = 1; ; poll++) {
    const stored = await stores.purchases.byId(claim.purchaseId);
    if (stored?.status === 'COMPLETED') return { purchase: stored };
    const current = await stores.purchaseClaims.read(buyer, clientId);
    if (current?.purchaseId !== claim.purchaseId) return {};
    const age = purchaseAgeMs(ctx.services, claim.purchaseId);
    const stale = age >= UNBOUND_IS_FINAL_MS;
    const timeUp = Date.now() >= waitUntil;
    if (stale || timeUp || (!checkedBound && age >= SETTLE_MS)) {
      checkedBound = true;
      // SERIAL: a bind in flight is finished first, so "not bound" holds unless its request binds later (if it still can).
      const bound = await stores.items.readBoundSerial(claim.itemId, claim.purchaseId);
      if (bound.quantity !== null) {
        // Bound: the CREATED row was written before the bind and lives a day.
        if (!stored) throw new Error(`bound purchase ${claim.purchaseId} has no purchase row`);
        return { purchase: await finishBound(ctx, stored) };
      }
      if (stale) return { stale: true };
      if (timeUp) throw inProgress();
    }
    // 20 ms doubling to 320 ms: a live first attempt usually finishes within a few polls.
    await delay(Math.min(320, 20 * 2 ** Math.min(poll - 1, 4)));
  }
}
