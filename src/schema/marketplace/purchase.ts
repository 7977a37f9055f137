import type { PurchaseRecord } from '../../db/marketplace/purchases.js';
import * as purchases from '../../resolvers/marketplace/purchases.js';
import * as buying from '../../resolvers/marketplace/buy-item.js';
import { DEFAULT_BIND_ATTEMPTS } from '../../config.js';
import { Limits } from '../../limits.js';
import { BIND_DEADLINE_MS, DUPLICATE_WAIT_MS } from '../../resolvers/marketplace/timing.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { ItemRef } from './item.js';
import { DecimalRef } from './money.js';
import { UserRef } from '../accounts/user.js';

const clientIdLength = `${Limits.clientId.min}–${Limits.clientId.max} characters`;
const clientIdHours = Limits.purchase.clientPurchaseIdTtlSeconds / 3600;
const seconds = (ms: number) => `${ms / 1000} s`;

const PurchaseStatusRef = builder.enumType('PurchaseStatus', {
  values: {
    CREATED: {
      description:
        "Bound to the item (the units are the buyer's) and still being completed: the server, or its recovery within minutes, makes it COMPLETED. Do not buy again.",
    },
    COMPLETED: { description: 'Bound to the item and permanent' },
  } as const,
});

export const PurchaseRef = builder.objectRef<PurchaseRecord>('Purchase');

builder.node(PurchaseRef, {
  description: 'Units of an item bought by a buyer',
  id: { resolve: (p) => p.id, extensions: sameForEveryViewer },
  loadMany: (keys, ctx) => purchases.purchaseNodes(ctx, keys),
  fields: (t) => ({
    item: t.field({ type: ItemRef, extensions: sameForEveryViewer, resolve: (p, _args, ctx) => purchases.purchaseItem(ctx, p) }),
    buyer: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (p, _args, ctx) => purchases.purchaseBuyer(ctx, p) }),
    unitPrice: t.field({ type: DecimalRef, resolve: (p) => p.unitPrice }),
    quantity: t.exposeInt('quantity'),
    status: t.field({ type: PurchaseStatusRef, resolve: (p) => p.status }),
    createdAt: t.field({ type: 'DateTime', resolve: (p) => p.createdAt }),
  }),
});

const PurchaseConnectionRef = builder.connectionObject({ type: PurchaseRef, name: 'PurchaseConnection' });

builder.objectFields(ItemRef, (t) => ({
  purchases: t.field({
    type: PurchaseConnectionRef,
    description: 'The completed purchases of the item, newest first: its seller only',
    args: { first: t.arg.int(), after: t.arg.string() },
    extensions: readsViewer,
    resolve: (item, args, ctx) => purchases.itemPurchases(ctx, item, args.first, args.after),
  }),
}));

builder.queryFields((t) => ({
  purchase: t.field({
    type: PurchaseRef,
    nullable: true,
    description: 'A purchase: its buyer and its seller only',
    args: { purchaseId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => purchases.purchaseById(ctx, args.purchaseId),
  }),
  myPurchases: t.field({
    type: PurchaseConnectionRef,
    description: "The viewer's completed purchases, newest first",
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: (_root, args, ctx) => purchases.myPurchases(ctx, args.first, args.after),
  }),
}));

builder.mutationFields((t) => ({
  buyItem: t.field({
    type: PurchaseRef,
    description: [
      'Buys quantity units of an item; never oversells.',
      'Answers with the purchase: COMPLETED, or CREATED when it is bound to the item but its completion failed (the units are bought and recovery completes it within minutes: do not buy again).',
      'Errors, checked in this order:',
      '- UNAUTHENTICATED: no session.',
      `- BAD_USER_INPUT: quantity not 1–${Limits.item.offeredUnits.max.toLocaleString('en')} (field quantity); itemId not an item id (field itemId); clientPurchaseId not ${clientIdLength}, or already used by this buyer in the last ${clientIdHours} h for another item or quantity (field clientPurchaseId).`,
      '- NOT_FOUND: no item has this id.',
      '- AUCTION_FINISHED: now is before the item\'s startDate, or at or after its endDate (sold out or not).',
      '- FORBIDDEN: the buyer is the item\'s seller.',
      '- NOT_ENOUGH_UNITS: quantity is more than the units left, including a sold-out item (0 left) during its sale period, and stock running out while the purchase retries a lost race; extensions.availableUnits says how many are left.',
      `- CONFLICT: nothing was bought; try again. The purchase lost the race for the stock PURCHASE_BIND_ATTEMPTS times (default ${DEFAULT_BIND_ATTEMPTS}), or took over ${seconds(BIND_DEADLINE_MS)} to bind; or, with a clientPurchaseId, an earlier attempt with it was still in progress after ${seconds(DUPLICATE_WAIT_MS)} (retry with the same clientPurchaseId to learn its outcome).`,
    ].join('\n'),
    args: {
      itemId: t.arg.id({ required: true }),
      quantity: t.arg.int({ required: true }),
      clientPurchaseId: t.arg.string({
        description:
          `Optional idempotency key, ${clientIdLength}, chosen by the client. A retry by the same buyer with the same key within ${clientIdHours} hours answers with the original purchase and buys nothing more, even when the attempts run at once (the later ones wait up to ${seconds(DUPLICATE_WAIT_MS)} for the first; CONFLICT if it is still running). Reusing a key for another item or quantity is BAD_USER_INPUT; a key whose attempt failed having bought nothing may be used again.`,
      }),
    },
    resolve: (_root, args, ctx) => buying.buyItem(ctx, args.itemId, args.quantity, args.clientPurchaseId),
  }),
}));
