import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { PubSub, Unsubscribe } from './pubsub.js';

/** A single instance's pub/sub: no broker, same JSON semantics as Redis. */
export class InProcessPubSub implements PubSub {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  constructor(private readonly logger: Logger) {}

  async publish(channel: string, event: unknown): Promise<void> {
    const json = JSON.stringify(event);
    // Deliver asynchronously, as a broker would, so publishers never run subscriber code inline.
    queueMicrotask(() => this.emitter.emit(channel, JSON.parse(json)));
  }

  async listen<T>(channel: string, onEvent: (event: T) => void): Promise<Unsubscribe> {
    const listener = (event: T) => {
      try {
        onEvent(event);
      } catch (err) {
        this.logger.error({ err, channel }, 'pub/sub listener failed');
      }
    };
    this.emitter.on(channel, listener);
    return async () => {
      this.emitter.off(channel, listener);
    };
  }

  /** Nothing stands between publisher and listeners: delivery never drops. */
  onDeliveryChange(): () => void {
    return () => {};
  }

  listeners(channel: string): number {
    return this.emitter.listenerCount(channel);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
