/**
 * itemUpdated: after every completed purchase the item is published on its
 * channel (through Redis when configured, so every instance's subscribers get
 * it). The event carries the item itself, so no subscriber reads it back.
 */
import { refreshLoaders, type Context } from '../../context.js';
import { BigDecimal } from '../../db/client.js';
import type { ItemRecord } from '../../db/items.js';
import { notFound } from '../../errors.js';
import { eventStream, type PubSub } from '../../pubsub/pubsub.js';
import { requireViewer } from '../guards.js';
import { parseId } from './ids.js';
import type { ItemView } from './items.js';
import { marketLoaders } from './loaders.js';

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

export async function subscribeItem(ctx: Context, rawId: string): Promise<AsyncIterableIterator<ItemEvent>> {
  requireViewer(ctx);
  const id = parseId('itemId', rawId);
  if (!(await marketLoaders(ctx).item.load(id))) throw notFound('Item');
  return newestOnly(await eventStream<ItemEvent>(ctx.services.pubsub, itemChannel(id)));
}

/**
 * Two completions can publish out of order (each read the item after its own
 * bind). Stock only goes down, so an event with no less stock than the last
 * one delivered is stale or a repeat (recovery completing again): drop it.
 */
function newestOnly(stream: AsyncIterableIterator<ItemEvent>): AsyncIterableIterator<ItemEvent> {
  let lowest = Number.POSITIVE_INFINITY;
  const iterator: AsyncIterableIterator<ItemEvent> = {
    async next() {
      for (;;) {
        const result = await stream.next();
        if (result.done || result.value.availableUnits < lowest) {
          if (!result.done) lowest = result.value.availableUnits;
          return result;
        }
      }
    },
    // Delegated directly, so unsubscribing ends the stream even while next() waits.
    return: (value?: unknown) => stream.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
    throw: (err?: unknown) => stream.throw?.(err) ?? Promise.reject(err),
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
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
