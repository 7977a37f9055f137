/**
 * Publish/subscribe for live events. One interface, two engines: Redis when
 * REDIS_URL is set (events cross server instances), in-process otherwise (one
 * instance). Nothing outside src/pubsub knows which one runs.
 *
 * Payloads are JSON: both engines serialize them, so code that works on a
 * laptop works the same across a cluster (a Date arrives as a string).
 *
 * Listeners and watchers are objects with a method rather than callbacks: an
 * idle subscription holds its listener for hours, and an event stream can be
 * its own listener and watcher instead of holding a closure (and a closure
 * context) for each role.
 */
import { fellBehind } from '../errors.js';

/** Told each event published on a channel it listens to. */
export interface Listener<T> {
  onEvent(event: T): void;
}

/** Told when delivery drops and when it is back (see PubSub.watchDelivery). */
export interface DeliveryWatcher {
  /**
   * `lostSince`, when delivery dropped: the time from which events may have been
   * lost, when that is before now (an instance's publish that failed, reported later).
   */
  onDeliveryChange(live: boolean, lostSince?: Date): void;
}

export interface PubSub {
  publish(channel: string, event: unknown): Promise<void>;
  /** Resolves once the listener is live on the broker. */
  listen<T>(channel: string, listener: Listener<T>): Promise<void>;
  /** Ends a listen(); does nothing for a listener that is not listening on the channel. */
  unlisten(channel: string, listener: Listener<unknown>): Promise<void>;
  /**
   * Tells `watcher.onDeliveryChange(false)` as soon as events may be missed
   * (the connection to the broker dropped), and `(true)` once every listen()
   * is live again. Whatever was published in between is lost to this instance.
   * An instance whose publish failed (its event may have reached nobody) tells
   * every instance once the broker takes its notice: `(false, since)`, then `(true)`.
   */
  watchDelivery(watcher: DeliveryWatcher): void;
  unwatchDelivery(watcher: DeliveryWatcher): void;
  /** How many listeners this instance holds on a channel (for readiness checks and tests). */
  listeners(channel: string): number;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Events a slow subscriber may fall behind by before its stream is ended with FELL_BEHIND (it can refetch what it missed). */
export const MAX_BUFFERED_EVENTS = 1_000;

/** What a stream does with one event: emits it (possibly transformed, possibly as the last one), skips it, or ends. */
export type StreamStep<U> = { emit: U; end?: boolean } | { skip: true } | { end: true };

/**
 * How one subscriber's stream treats its channel's events. One object with
 * methods (a class instance per subscription), so the rules of a stream cost
 * its fields, not a closure per rule.
 */
export interface StreamRules<T, U> {
  /** Each event as it is about to be delivered; without it every event is emitted as it came. */
  step?(event: T): StreamStep<U> | Promise<StreamStep<U>>;
  /**
   * Delivery dropped (false; events since `lostSince`, or since now, may be
   * lost) or is back (true): events published meanwhile never reached the
   * stream. An event returned here is yielded in its place in the order
   * (through step), so the subscriber knows to catch up from storage.
   */
  deliveryChanged?(live: boolean, lostSince?: Date): T | undefined;
  /** Called once when the stream ends, however it ends (to release what the rules hold). */
  ended?(): void;
}

/**
 * When a stream's events may have started to be lost, once delivery dropped
 * (deliveryChanged(false, lostSince)): the earliest of what it knew and what
 * it is told, `now` when it is told no time.
 */
export function lostFrom(lostAt: Date | undefined, lostSince: Date | undefined, now: Date): Date {
  const since = lostSince ?? now;
  return lostAt && lostAt <= since ? lostAt : since;
}

/**
 * One stream's interruption, for its deliveryChanged: from when its events may
 * have been lost while delivery is down, handed over once delivery is back.
 */
export class Interruption {
  private lostAt: Date | undefined;

  /** Undefined, or, once delivery is back after a loss, when events may have started to be lost. */
  changed(live: boolean, lostSince: Date | undefined, now: Date): Date | undefined {
    if (!live) {
      this.lostAt = lostFrom(this.lostAt, lostSince, now);
      return undefined;
    }
    const lostAt = this.lostAt;
    this.lostAt = undefined;
    return lostAt;
  }
}

/**
 * Takes a stream's items synchronously, as they arrive, rather than through
 * next(): with a thousand subscribers of a room, a promise and a chain of
 * iterators per subscriber and event cost several times the socket write.
 * A stream hands an item to its direct consumer only while its
 * reader waits in next() and nothing is queued, so items keep their order
 * whichever way each one goes.
 */
export interface DirectConsumer<U> {
  /** True once it has delivered the item itself; false, and the item goes to the waiting next() instead. */
  take(item: U): boolean;
}

/** The method of a stream that accepts a direct consumer (or drops one, given undefined); true if it took it. */
export const TAKE_DIRECTLY = Symbol('takeDirectly');

export interface DirectlyTakeable<U> {
  [TAKE_DIRECTLY](consumer: DirectConsumer<U> | undefined): boolean;
}

/** Whether `source` can hand its items to a direct consumer. */
export function isDirectlyTakeable<U>(source: unknown): source is DirectlyTakeable<U> {
  return typeof (source as Partial<DirectlyTakeable<U>> | null)?.[TAKE_DIRECTLY] === 'function';
}

/**
 * The events of a channel as an async iterator whose subscription is already
 * live when the promise resolves, so nothing published after a successful
 * subscribe is missed. Ending the iterator (the client unsubscribes, even
 * before the first event or while one is awaited) releases the listener.
 */
export async function eventStream<T, U = T>(
  pubsub: PubSub,
  channel: string,
  rules?: StreamRules<T, U>,
): Promise<AsyncIterableIterator<U>> {
  const stream = new EventStream<T, U>(pubsub, channel, rules);
  if (rules?.deliveryChanged) pubsub.watchDelivery(stream);
  try {
    await pubsub.listen(channel, stream);
  } catch (err) {
    pubsub.unwatchDelivery(stream);
    throw err;
  }
  return stream;
}

/** A step that skipped its event: the stream takes the next one. */
const SKIPPED = Symbol('skipped');

/**
 * One hand-written iterator is the whole stream: buffer, rules and release.
 * An idle stream holds its fields and, while a next() waits, that call's
 * promise and resolver; no suspended async function, no wrapper per rule.
 */
class EventStream<T, U> implements AsyncIterableIterator<U>, Listener<T>, DeliveryWatcher, DirectlyTakeable<U> {
  private readonly queue: T[] = [];
  private direct: DirectConsumer<U> | undefined;
  /** Resolves the next() that waits for an event (or for the end). */
  private waiting: ((result: IteratorResult<U> | Promise<IteratorResult<U>>) => void) | undefined;
  private done = false;
  private overflowed = false;
  private released: Promise<void> | undefined;

  constructor(
    private readonly pubsub: PubSub,
    private readonly channel: string,
    private readonly rules: StreamRules<T, U> | undefined,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  [TAKE_DIRECTLY](consumer: DirectConsumer<U> | undefined): boolean {
    this.direct = this.done ? undefined : consumer;
    return true;
  }

  onEvent(event: T): void {
    if (this.done) return;
    if (this.direct && this.waiting && this.queue.length === 0) return this.takeDirectly(event);
    if (this.queue.length >= MAX_BUFFERED_EVENTS) {
      this.overflowed = true;
      void this.finish();
      return;
    }
    this.queue.push(event);
    this.wake();
  }

  onDeliveryChange(live: boolean, lostSince?: Date): void {
    const marker = this.rules?.deliveryChanged?.(live, lostSince);
    if (marker === undefined || this.done) return;
    this.queue.push(marker);
    this.wake();
  }

  next(): Promise<IteratorResult<U>> {
    if (this.queue.length > 0 || this.done) return Promise.resolve(this.take());
    return new Promise((resolve) => (this.waiting = resolve));
  }

  async return(): Promise<IteratorResult<U>> {
    this.queue.length = 0;
    await this.finish();
    return { value: undefined, done: true };
  }

  async throw(err?: unknown): Promise<IteratorResult<U>> {
    this.queue.length = 0;
    await this.finish();
    throw err;
  }

  private wake(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    waiting(this.take());
  }

  /**
   * The reader waits and nothing is queued: the event goes through the rules
   * at once, and an item to emit goes to the direct consumer. Whatever the
   * consumer leaves (and an end, a skip, a step that awaits) is settled as
   * take() settles it, for the waiting next().
   */
  private takeDirectly(event: T): void {
    // Taken as wake() takes it, so that a step that finishes the stream does not answer it a second time.
    const waiting = this.waiting!;
    this.waiting = undefined;
    let step: StreamStep<U> | Promise<StreamStep<U>>;
    try {
      step = this.stepOf(event);
    } catch (err) {
      return waiting(Promise.reject(err));
    }
    if (!(step instanceof Promise) && 'emit' in step && !step.end && this.direct!.take(step.emit)) {
      this.waiting = waiting;
      return;
    }
    const settled = this.settle(step);
    if (settled === SKIPPED) this.waiting = waiting;
    else waiting(settled);
  }

  private stepOf(event: T): StreamStep<U> | Promise<StreamStep<U>> {
    return this.rules?.step ? this.rules.step(event) : { emit: event as unknown as U };
  }

  /**
   * The next event through the rules, the end once the queue is drained after
   * finishing, or a wait. Synchronous while the rules are: an event goes out
   * without a promise (and its microtasks) per subscriber.
   */
  private take(): IteratorResult<U> | Promise<IteratorResult<U>> {
    while (this.queue.length > 0) {
      const event = this.queue.shift()!;
      let step: StreamStep<U> | Promise<StreamStep<U>>;
      try {
        step = this.stepOf(event);
      } catch (err) {
        // As from an async step: the next() that asked fails, nothing throws into the pub/sub's delivery.
        return Promise.reject(err);
      }
      const taken = this.settle(step);
      if (taken !== SKIPPED) return taken;
    }
    if (!this.done) return this.next();
    if (this.overflowed) return Promise.reject(fellBehind(MAX_BUFFERED_EVENTS));
    return { value: undefined, done: true };
  }

  /** What a step, awaited if need be, makes of the stream; SKIPPED (synchronous steps only) for the next event. */
  private settle(step: StreamStep<U> | Promise<StreamStep<U>>): IteratorResult<U> | Promise<IteratorResult<U>> | typeof SKIPPED {
    if (!(step instanceof Promise)) return this.afterStep(step);
    return step.then((awaited) => {
      const taken = this.afterStep(awaited);
      return taken === SKIPPED ? this.take() : taken;
    });
  }

  /** What a step makes of the stream: its result, or SKIPPED for the next event. */
  private afterStep(step: StreamStep<U>): IteratorResult<U> | Promise<IteratorResult<U>> | typeof SKIPPED {
    if ('skip' in step) return SKIPPED;
    if (!step.end) return { value: step.emit, done: false };
    // The stream ends by its own rule (its last event says why): whatever it fell behind by is moot.
    this.queue.length = 0;
    this.overflowed = false;
    return this.finish().then(() => ('emit' in step ? { value: step.emit, done: false } : { value: undefined, done: true }));
  }

  private finish(): Promise<void> {
    if (!this.released) {
      this.done = true;
      this.direct = undefined;
      if (this.rules?.deliveryChanged) this.pubsub.unwatchDelivery(this);
      this.rules?.ended?.();
      this.released = this.pubsub.unlisten(this.channel, this);
      // A next() waiting for an event gets the end (or the overflow error) instead.
      this.wake();
    }
    return this.released;
  }
}
