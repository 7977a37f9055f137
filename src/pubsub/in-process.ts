import type { Logger } from 'pino';
import type { PubSub, Listener } from './pubsub.js';
import { ChannelListeners, channelKind, type PubSubMeter } from './listeners.js';

/** A single instance's pub/sub: no broker, same JSON semantics as Redis. */
export class InProcessPubSub implements PubSub {
  private readonly channels: ChannelListeners;

  constructor(
    logger: Logger,
    private readonly meter: PubSubMeter,
  ) {
    this.channels = new ChannelListeners(logger, meter);
  }

  async publish(channel: string, event: unknown): Promise<void> {
    const json = JSON.stringify(event);
    // Deliver asynchronously, as a broker would, so publishers never run subscriber code inline.
    queueMicrotask(() => this.channels.deliver(channel, JSON.parse(json)));
    this.meter.eventPublished(channelKind(channel));
  }

  async listen<T>(channel: string, listener: Listener<T>): Promise<void> {
    this.channels.add(channel, listener);
  }

  async unlisten(channel: string, listener: Listener<unknown>): Promise<void> {
    this.channels.delete(channel, listener);
  }

  /** Nothing stands between publisher and listeners: delivery never drops. */
  watchDelivery(): void {}

  unwatchDelivery(): void {}

  listeners(channel: string): number {
    return this.channels.count(channel);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.channels.clear();
  }
}
