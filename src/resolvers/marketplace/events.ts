/**
 * itemUpdated: after every completed purchase the item is published on its
 * channel (through Redis when configured, so every instance's subscribers get
 * it). The event carries the item itself, so no subscriber reads it back.
 * A subscription lasts as long as the sale: it ends once the item is sold out
 * or its end date has come.
 */
import { refreshLoaders, type Context } from '../../context.js';
import { BigDecimal } from '../../db/cassandra/client.js';
import type { ItemRecord } from '../../db/marketplace/items.js';
import { AppError, ErrorCode, notFound } from '../../errors.js';
import { eventStream, onStreamEnd, shapeStream, type PubSub } from '../../pubsub/pubsub.js';
import type { Clock } from '../../services.js';
import { requireViewer } from '../shared/guards.js';
import { parseId } from './ids.js';
import { isFinished, type ItemView } from './items.js';
import { atTime } from '../../at-time.js';

export const itemChannel = (itemId: string) => `item.${itemId}.updated`;

/** JSON: the price as its exact decimal string, dates as ISO strings. */
export interface ItemEvent {
  id: string;
  seller: string;
  name: string;
  description: string;
  unitPrice: string;
  offeredUnits: number;
  availableUnits: number;
  startDate: string;
  endDate: string;
  tags: string[];
  auctionFinished: boolean;
}

export async function publishItem(pubsub: PubSub, item: ItemRecord): Promise<void> {
  const event: ItemEvent = {
    id: item.id,
    seller: item.seller,
    name: item.name,
    description: item.description,
    unitPrice: item.unitPrice.toString(),
    offeredUnits: item.offeredUnits,
    availableUnits: item.availableUnits,
    startDate: item.startDate.toISOString(),
    endDate: item.endDate.toISOString(),
    tags: item.tags,
    auctionFinished: item.auctionFinished,
  };
  await pubsub.publish(itemChannel(item.id), event);
}

/**
 * The item's updates until its sale is over: the stream completes after the
 * event that sells it out, or at its end date. A finished item has no updates
 * to give: AUCTION_FINISHED.
 */
export async function subscribeItem(ctx: Context, rawId: string): Promise<AsyncIterableIterator<ItemEvent>> {
  requireViewer(ctx);
  const id = parseId('itemId', rawId);
  const { pubsub, stores, clock } = ctx.services;
  const stream = await eventStream<ItemEvent>(pubsub, itemChannel(id));
  // Read once the stream is live, so a sale that finishes the item is either seen here or delivered.
  let item: ItemRecord | undefined;
  try {
    item = await stores.items.byId(id);
    if (!item) throw notFound('Item');
    if (isFinished(ctx, item)) throw new AppError(ErrorCode.AUCTION_FINISHED, 'The sale of this item is over: it has no more updates');
  } catch (err) {
    await stream.return?.();
    throw err;
  }
  return endsAt(newestUntilSoldOut(stream), item.endDate, clock);
}

/**
 * Two completions can publish out of order (each read the item after its own
 * bind). Stock only goes down, so an event with no less stock than the last
 * one delivered is stale or a repeat (recovery completing again): dropped.
 * The event that sells the item out is the last.
 */
function newestUntilSoldOut(stream: AsyncIterableIterator<ItemEvent>): AsyncIterableIterator<ItemEvent> {
  let lowest = Number.POSITIVE_INFINITY;
  return shapeStream(stream, {
    skip: (event) => {
      if (event.availableUnits >= lowest) return true;
      lowest = event.availableUnits;
      return false;
    },
    endsAfter: (event) => event.auctionFinished,
  });
}

/** Ends the stream at `end` (by the injectable clock), clearing its timer however it ends. */
function endsAt<T>(stream: AsyncIterableIterator<T>, end: Date, clock: Clock): AsyncIterableIterator<T> {
  const cancel = atTime(end, () => void stream.return?.(), clock);
  return onStreamEnd(stream, cancel);
}

export function itemFromEvent(ctx: Context, event: ItemEvent): ItemView {
  // The seller's profile may have changed since the subscription began.
  refreshLoaders(ctx);
  return {
    ...event,
    unitPrice: BigDecimal.fromString(event.unitPrice),
    startDate: new Date(event.startDate),
    endDate: new Date(event.endDate),
  };
}
