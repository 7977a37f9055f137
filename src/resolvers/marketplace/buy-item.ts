/**
 * buyItem: its input rules, then a plain purchase (purchasing.ts) or, with a
 * clientPurchaseId, one that a retry can never make twice (idempotent-buying.ts).
 */
import type { Context } from '../context.js';
import type { PurchaseRecord } from '../../db/marketplace/purchases.js';
import { Limits } from '../../limits.js';
import { validClientId } from '../../validation.js';
import { clientIdFor } from '../idempotency/run.js';
import { requireViewer } from '../shared/guards.js';
import { buyOnce } from './idempotent-buying.js';
import { parseId } from './ids.js';
import { newPurchaseId, runPurchase } from './purchasing.js';
import { validIntIn } from './validation.js';

export async function buyItem(
  ctx: Context,
  rawItemId: string,
  quantity: number,
  rawClientPurchaseId?: string | null,
): Promise<PurchaseRecord> {
  const viewer = requireViewer(ctx);
  validIntIn('quantity', quantity, 1, Limits.item.offeredUnits.max);
  const itemId = parseId('itemId', 'Item', rawItemId);
  // Under an idempotency key without a clientPurchaseId, one derived from the key: a retry never buys twice.
  const clientId = validClientId('clientPurchaseId', rawClientPurchaseId) ?? clientIdFor(ctx);
  if (clientId) return buyOnce(ctx, viewer.login, clientId, { itemId, quantity });
  return runPurchase(ctx, itemId, quantity, newPurchaseId(ctx), { mayBeBound: false });
}
