import type { ItemView } from '../../resolvers/marketplace/items.js';
import * as items from '../../resolvers/marketplace/items.js';
import * as events from '../../resolvers/marketplace/events.js';
import type { ItemEvent } from '../../resolvers/marketplace/events.js';
import { builder } from '../shared/builder.js';
import { sameForEveryViewer } from '../shared/viewer-dependent.js';
import { Limits } from '../../limits.js';
import { DecimalRef } from './money.js';
import { UserRef } from '../accounts/user.js';

export const ItemRef = builder.objectRef<ItemView>('Item');

builder.node(ItemRef, {
  description: 'Something for sale: a number of units at a unit price, between a start and an end date',
  id: { resolve: (item) => item.id, extensions: sameForEveryViewer },
  loadMany: (keys, ctx) => items.itemNodes(ctx, keys),
  fields: (t) => ({
    seller: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (item, _args, ctx) => items.itemSeller(ctx, item) }),
    name: t.exposeString('name'),
    description: t.string({ extensions: sameForEveryViewer, resolve: (item, _args, ctx) => items.itemDescription(ctx, item) }),
    unitPrice: t.field({ type: DecimalRef, resolve: (item) => item.unitPrice }),
    offeredUnits: t.exposeInt('offeredUnits'),
    availableUnits: t.exposeInt('availableUnits'),
    startDate: t.field({ type: 'DateTime', resolve: (item) => item.startDate }),
    endDate: t.field({ type: 'DateTime', resolve: (item) => item.endDate }),
    tags: t.exposeStringList('tags', { description: 'Lower-case, sorted' }),
    auctionFinished: t.boolean({
      description: 'True once the item is sold out or its end date has passed',
      extensions: sameForEveryViewer,
      resolve: (item, _args, ctx) => items.isFinished(ctx, item),
    }),
  }),
});

export const ItemConnectionRef = builder.connectionObject({ type: ItemRef, name: 'ItemConnection' });

const CreateItemInput = builder.inputType('CreateItemInput', {
  fields: (t) => ({
    name: t.string({ required: true, description: `${Limits.item.name.min}–${Limits.item.name.max} characters` }),
    description: t.string({ description: `At most ${Limits.item.description.max} characters` }),
    unitPrice: t.field({ type: DecimalRef, required: true, description: 'Greater than 0, at most 2 decimals, e.g. "19.99"' }),
    offeredUnits: t.int({ required: true, description: `${Limits.item.offeredUnits.min}–${Limits.item.offeredUnits.max.toLocaleString('en')}` }),
    startDate: t.field({ type: 'DateTime', required: true }),
    endDate: t.field({ type: 'DateTime', required: true, description: 'After startDate, and in the future' }),
    tags: t.stringList({ description: `At most ${Limits.item.tags.max}, each ${Limits.item.tag.min}–${Limits.item.tag.max} characters; stored lower-case` }),
  }),
});

builder.queryFields((t) => ({
  item: t.field({
    type: ItemRef,
    nullable: true,
    args: { itemId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => items.itemById(ctx, args.itemId),
  }),
  itemsBySeller: t.field({
    type: ItemConnectionRef,
    description: "A seller's items listed in the last 30 days, newest first; none for a login that names nobody",
    args: { login: t.arg.string({ required: true }), first: t.arg.int(), after: t.arg.string() },
    resolve: (_root, args, ctx) => items.itemsBySeller(ctx, args.login, args.first, args.after),
  }),
  itemsByTag: t.field({
    type: ItemConnectionRef,
    description: `Items listed under a tag in the last 30 days, newest first. BAD_USER_INPUT (tag) unless the tag is ${Limits.item.tag.min}–${Limits.item.tag.max} characters`,
    args: { tag: t.arg.string({ required: true }), first: t.arg.int(), after: t.arg.string() },
    resolve: (_root, args, ctx) => items.itemsByTag(ctx, args.tag, args.first, args.after),
  }),
  itemHistory: t.field({
    type: ItemConnectionRef,
    description:
      'Every item a seller listed in one UTC month ("2026-11"), newest first; kept after the 30-day listings expire. None for a login that names nobody; BAD_USER_INPUT (month) for a month that does not exist.',
    args: { login: t.arg.string({ required: true }), month: t.arg.string({ required: true }), first: t.arg.int(), after: t.arg.string() },
    resolve: (_root, args, ctx) => items.itemHistory(ctx, args.login, args.month, args.first, args.after),
  }),
}));

builder.mutationFields((t) => ({
  createItem: t.field({
    type: ItemRef,
    args: { input: t.arg({ type: CreateItemInput, required: true }) },
    resolve: (_root, args, ctx) => items.createItem(ctx, args.input),
  }),
}));

builder.subscriptionFields((t) => ({
  itemUpdated: t.field({
    type: ItemRef,
    description:
      'The item after each completed purchase (its live stock, never older than the last one sent). Completes after the purchase that sells it out, or at its end date. Errors: NOT_FOUND; AUCTION_FINISHED when the item is already sold out or past its end date.',
    args: { itemId: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) => events.subscribeItem(ctx, args.itemId),
    extensions: sameForEveryViewer,
    resolve: (event: ItemEvent, _args, ctx) => events.itemFromEvent(ctx, event),
  }),
}));
