/**
 * Publish/subscribe for live events. One interface, two engines: Redis when
 * REDIS_URL is set (events cross server instances), in-process otherwise (one
 * instance). Nothing outside src/pubsub knows which one runs.
 *
 * Payloads are JSON: both engines serialize them, so code that works on a
 * laptop works the same across a cluster (a Date arrives as a string).
 */
export type Unsubscribe = () => Promise<void>;

export interface PubSub {
  publish(channel: string, event: unknown): Promise<void>;
  /** Resolves once the subscription is live on the broker. */
  listen<T>(channel: string, onEvent: (event: T) => void): Promise<Unsubscribe>;
  /**
   * Tells `listener(false)` as soon as events may be missed (the connection to
   * the broker dropped), and `listener(true)` once every listen() is live
   * again. Whatever was published in between is lost to this instance.
   */
  onDeliveryChange(listener: (live: boolean) => void): () => void;
  /** How many listeners this instance holds on a channel (for readiness checks and tests). */
  listeners(channel: string): number;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Events a slow subscriber may fall behind by before its stream is ended (it can refetch what it missed). */
export const MAX_BUFFERED_EVENTS = 1_000;

/**
 * The events of a channel as an async iterator whose subscription is already
 * live when the promise resolves, so nothing published after a successful
 * subscribe is missed. Ending the iterator (the client unsubscribes, even
 * before the first event) releases the listener.
 */
export interface GapNotice<T> {
  clock: { now(): Date };
  /** The event the stream yields once delivery is back after an interruption that began at `lostAt`. */
  event(lostAt: Date): T;
}

/**
 * `gap`: when the broker connection drops, events published meanwhile never
 * reach this stream. Once delivery is back, the stream yields gap.event(…)
 * (in its place in the order), so the subscriber knows to catch up from storage.
 */
export async function eventStream<T>(pubsub: PubSub, channel: string, gap?: GapNotice<T>): Promise<AsyncIterableIterator<T>> {
  const queue: T[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let overflowed = false;
  let lostAt: Date | undefined;
  const unwatch = gap
    ? pubsub.onDeliveryChange((live) => {
        if (!live) {
          lostAt ??= gap.clock.now();
          return;
        }
        if (!lostAt || done) return;
        queue.push(gap.event(lostAt));
        lostAt = undefined;
        wake?.();
      })
    : undefined;
  const unsubscribe = await pubsub.listen<T>(channel, (event) => {
    if (done) return;
    if (queue.length >= MAX_BUFFERED_EVENTS) {
      overflowed = true;
      void finish();
      return;
    }
    queue.push(event);
    wake?.();
  });
  let released: Promise<void> | undefined;
  const finish = () => {
    done = true;
    wake?.();
    unwatch?.();
    released ??= unsubscribe();
    return released;
  };
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      for (;;) {
        if (queue.length > 0) return { value: queue.shift()!, done: false };
        if (done) {
          if (overflowed) throw new Error(`subscriber fell more than ${MAX_BUFFERED_EVENTS} events behind`);
          return { value: undefined, done: true };
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    },
    async return() {
      queue.length = 0;
      await finish();
      return { value: undefined, done: true };
    },
    async throw(err) {
      queue.length = 0;
      await finish();
      throw err;
    },
  };
  return iterator;
}

/** What a stream transformation does with one event. */
export type StreamStep<U> = { emit: U; end?: boolean } | { skip: true } | { end: true };

/**
 * A stream derived event by event from another: each event is emitted
 * (possibly transformed, possibly as the last one), skipped, or ends the
 * stream. Ending, or the client returning it, returns the source (releasing
 * its listener). Hand-written rather than a generator or Repeater: those
 * cannot be returned before their first next() or while awaiting an event, so
 * an early unsubscribe would leak the listener.
 */
export function transformStream<T, U>(
  source: AsyncIterator<T>,
  step: (event: T) => StreamStep<U> | Promise<StreamStep<U>>,
): AsyncIterableIterator<U> {
  let ended = false;
  const end = async () => {
    ended = true;
    await source.return?.();
  };
  const iterator: AsyncIterableIterator<U> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      while (!ended) {
        const result = await source.next();
        if (result.done) break;
        const next = await step(result.value);
        if ('skip' in next) continue;
        if (!('emit' in next)) break;
        if (next.end) await end();
        return { value: next.emit, done: false };
      }
      await end();
      return { value: undefined, done: true };
    },
    async return() {
      await end();
      return { value: undefined, done: true };
    },
    async throw(err) {
      await end();
      throw err;
    },
  };
  return iterator;
}

/** A view of an event stream that drops some events and ends after others. */
export function shapeStream<T>(
  source: AsyncIterator<T>,
  rules: { skip?: (event: T) => boolean; endsAfter?: (event: T) => boolean },
): AsyncIterableIterator<T> {
  return transformStream<T, T>(source, (event) =>
    rules.skip?.(event) ? { skip: true } : { emit: event, end: rules.endsAfter?.(event) ?? false },
  );
}

/** `source`, calling `onEnded` once when it completes, fails or is returned early. */
export function onStreamEnd<T>(source: AsyncIterable<T>, onEnded: () => void): AsyncIterableIterator<T> {
  const inner = source[Symbol.asyncIterator]();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnded();
  };
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      try {
        const step = await inner.next();
        if (step.done) end();
        return step;
      } catch (err) {
        end();
        throw err;
      }
    },
    async return(value?: unknown) {
      end();
      return (await inner.return?.(value)) ?? { done: true, value: undefined };
    },
    async throw(err?: unknown) {
      end();
      if (inner.throw) return inner.throw(err);
      throw err;
    },
  };
  return iterator;
}
