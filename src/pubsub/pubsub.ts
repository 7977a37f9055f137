/**
 * Publish/subscribe for live events. One interface, two engines: Redis when
 * REDIS_URL is set (events cross server instances), in-process otherwise (one
 * instance). Nothing outside src/pubsub knows which one runs.
 *
 * Payloads are JSON: both engines serialize them, so code that works on a
 * laptop works the same across a cluster (a Date arrives as a string).
 */
import { Repeater } from 'graphql-yoga';

export type Unsubscribe = () => Promise<void>;

export interface PubSub {
  publish(channel: string, event: unknown): Promise<void>;
  /** Resolves once the subscription is live on the broker. */
  listen<T>(channel: string, onEvent: (event: T) => void): Promise<Unsubscribe>;
  /** How many listeners this instance holds on a channel (for readiness checks and tests). */
  listeners(channel: string): number;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The events of a channel as an async iterator whose subscription is already
 * live when the promise resolves, so nothing published after a successful
 * subscribe is missed. Ending the iterator (client unsubscribes) unsubscribes.
 */
export async function eventStream<T>(pubsub: PubSub, channel: string): Promise<AsyncIterableIterator<T>> {
  const buffered: T[] = [];
  let push: ((event: T) => void) | undefined;
  const unsubscribe = await pubsub.listen<T>(channel, (event) => (push ? push(event) : buffered.push(event)));
  return new Repeater<T>(async (repeaterPush, stop) => {
    for (const event of buffered.splice(0)) await repeaterPush(event);
    push = (event) => void repeaterPush(event);
    await stop;
    await unsubscribe();
  });
}
