import type { PubSub } from './pubsub.js';

/** Where a metered pub/sub reports (the instance's metrics); structural, so src/pubsub depends on nothing. */
export interface PubSubMeter {
  eventPublished(channelKind: string): void;
  eventDelivered(channelKind: string): void;
}

/**
 * A pub/sub that counts what it publishes and what it hands to its listeners,
 * by channel kind: the channel's first segment ("room" for "room.lobby"), a
 * constant of the code that names channels, so a bounded label whatever the
 * room or user.
 */
export function meteredPubSub(engine: PubSub, meter: PubSubMeter): PubSub {
  return {
    async publish(channel, event) {
      await engine.publish(channel, event);
      meter.eventPublished(channelKind(channel));
    },
    listen<T>(channel: string, onEvent: (event: T) => void) {
      const kind = channelKind(channel);
      return engine.listen<T>(channel, (event) => {
        meter.eventDelivered(kind);
        onEvent(event);
      });
    },
    onDeliveryChange: (listener) => engine.onDeliveryChange(listener),
    listeners: (channel) => engine.listeners(channel),
    ping: () => engine.ping(),
    close: () => engine.close(),
  };
}

const channelKind = (channel: string) => channel.split('.', 1)[0];
