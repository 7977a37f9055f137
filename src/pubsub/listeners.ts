import type { Logger } from 'pino';
import type { Listener } from './pubsub.js';

/** Where the engines report what they publish and deliver (the instance's metrics); structural, so src/pubsub depends on nothing. */
export interface PubSubMeter {
  eventPublished(channelKind: string): void;
  /** `count` listeners of the kind were handed one event. */
  eventDelivered(channelKind: string, count: number): void;
}

/**
 * The channel's first segment ("room" for "room.lobby"): a constant of the
 * code that names channels, so a bounded metric label whatever the room or user.
 */
export const channelKind = (channel: string) => channel.split('.', 1)[0]!;

/**
 * An instance's listeners by channel, and the delivery of an event to each of
 * them, counted by channel kind. Both engines fan out here: the broker (or the
 * in-process queue) hands each event over once per channel, and a listener
 * costs its entry in a set, not a wrapper function per layer.
 */
export class ChannelListeners {
  private readonly byChannel = new Map<string, Set<Listener<unknown>>>();

  constructor(
    private readonly logger: Logger,
    private readonly meter: PubSubMeter,
  ) {}

  add(channel: string, listener: Listener<unknown>): void {
    let set = this.byChannel.get(channel);
    if (!set) this.byChannel.set(channel, (set = new Set()));
    set.add(listener);
  }

  /** True when this was the channel's last listener. */
  delete(channel: string, listener: Listener<unknown>): boolean {
    const set = this.byChannel.get(channel);
    if (!set?.delete(listener)) return false;
    if (set.size > 0) return false;
    this.byChannel.delete(channel);
    return true;
  }

  count(channel: string): number {
    return this.byChannel.get(channel)?.size ?? 0;
  }

  /** Every listener hears the event, even when one before it throws (that one is logged). */
  deliver(channel: string, event: unknown): void {
    const set = this.byChannel.get(channel);
    if (!set) return;
    // Counted once per event, not once per listener: a room's event goes to every subscriber here.
    this.meter.eventDelivered(channelKind(channel), set.size);
    for (const listener of set) {
      try {
        listener.onEvent(event);
      } catch (err) {
        this.logger.error({ err, channel }, 'pub/sub listener failed');
      }
    }
  }

  clear(): void {
    this.byChannel.clear();
  }
}
