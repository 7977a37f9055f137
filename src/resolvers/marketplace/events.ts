/**
 * itemUpdated: after every completed purchase the item is published on its
 * channel (through Redis when configured, so every instance's subscribers get
 * it). The event carries the item itself, so no subscriber reads it back.
 * A subscription lasts as long as the sale: it ends once the item is sold out
 * or its end date has come.
 */
import { refreshLoaders, type Context } from '../context.js';
import { BigDecimal } from '../../db/cassandra/client.js';
import type { ItemRecord } from '../../db/marketplace/items.js';
import { AppError, ErrorCode, notFound } from '../../errors.js';
import { eventStream, type PubSub, type StreamRules, type StreamStep } from '../../pubsub/pubsub.js';
import type { Clock } from '../../clock.js';
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
  const id = parseId('itemId', 'Item', rawId);
  const { pubsub, stores, clock } = ctx.services;
  const sale = new SaleUpdates();
  const stream = await eventStream(pubsub, itemChannel(id), sale);
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
  sale.endAt(item.endDate, clock, stream);
  return stream;
}

/**
 * The rules of an itemUpdated stream. Two completions can publish out of
 * order (each read the item after its own bind). Stock only goes down, so an
 * event with no less stock than the last one delivered is stale or a repeat
 * (recovery completing again): dropped. The event that sells the item out is
 * the last; the stream also ends at the sale's end date.
 */
class SaleUpdates implements StreamRules<ItemEvent, ItemEvent> {
  private lowest = Number.POSITIVE_INFINITY;
  private over = false;
  private cancelTimer: (() => void) | undefined;

  step(event: ItemEvent): StreamStep<ItemEvent> {
    if (event.availableUnits >= this.lowest) return { skip: true };
    this.lowest = event.availableUnits;
    return { emit: event, end: event.auctionFinished };
  }

  /** Ends the stream at `end` (by the injectable clock); the timer is cleared however the stream ends. */
  endAt(end: Date, clock: Clock, stream: AsyncIterator<ItemEvent>): void {
    if (!this.over) this.cancelTimer = atTime(end, () => void stream.return?.(), clock);
  }

  ended(): void {
    this.over = true;
    this.cancelTimer?.();
  }
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
