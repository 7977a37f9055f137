/**
 * The live room feed: one pub/sub channel per room, events published only
 * after their write committed, and per room in the order this instance
 * committed them (ids are made and turns taken at the same moment, so the
 * feed's order is the history's order).
 */
import type { Logger } from 'pino';
import type { ChatUser } from './model.js';
import type { MessageRecord } from './model.js';
import { catchUpSettleMs } from './model.js';
import { maxTimeUuid } from '../../db/cassandra/timeuuids.js';
import { dayBucket } from '../../buckets.js';
import { encodeHistoryCursor } from '../../pagination.js';
import type { Config } from '../../config.js';
import { eventStream, shapeStream, transformStream, type PubSub } from '../../pubsub/pubsub.js';
import type { AppError } from '../../errors.js';
import type { Clock } from '../../services.js';
import { Limits } from '../../limits.js';

export const roomChannel = (roomName: string) => `room.${roomName}`;

/** Room events as they travel through pub/sub (JSON). */
export type RoomEvent =
  | { kind: 'MessagePosted'; roomName: string; message: MessageRecord }
  | { kind: 'MessageHidden'; roomName: string; message: MessageRecord }
  | { kind: 'ParticipantJoined'; roomName: string; user: ChatUser }
  | { kind: 'ParticipantLeft'; roomName: string; user: ChatUser }
  | { kind: 'TypingStarted'; roomName: string; user: ChatUser }
  | { kind: 'RoomDeleted'; roomName: string; deletedBy: ChatUser };

/** A place in a room's publish order, taken before the write and filled (or given up) after it. */
export interface Turn {
  /** Publishes once every earlier turn of the room has; resolves when these events are out. */
  publish(events: RoomEvent[]): Promise<void>;
  /** The write failed: publish nothing, let later turns go. */
  cancel(): void;
}

/**
 * Chains each room's publishes on a promise queue: a turn taken later never
 * publishes before an earlier one, even when its write commits first. One
 * per pub/sub (that is, per app instance); queues of idle rooms are dropped.
 */
export class RoomSequencer {
  private readonly tails = new Map<string, Promise<void>>();

  constructor(
    private readonly pubsub: PubSub,
    private readonly logger: Logger,
  ) {}

  take(roomName: string): Turn {
    let fill!: (events: RoomEvent[]) => void;
    const filled = new Promise<RoomEvent[]>((resolve) => (fill = resolve));
    const previous = this.tails.get(roomName) ?? Promise.resolve();
    const done = previous.then(async () => {
      for (const event of await filled) {
        // A failed publish loses one live event, never the message (clients refetch with `before`).
        await this.pubsub
          .publish(roomChannel(roomName), event)
          .catch((err) => this.logger.warn({ err: (err as Error).message, roomName, kind: event.kind }, 'room event not published (subscribers are told to catch up when pub/sub is back)'));
      }
    });
    this.tails.set(roomName, done);
    void done.finally(() => {
      if (this.tails.get(roomName) === done) this.tails.delete(roomName);
    });
    return {
      publish: (events) => {
        fill(events);
        return done;
      },
      cancel: () => fill([]),
    };
  }
}


/**
 * Pub/sub was interrupted: live events published meanwhile were lost to this
 * subscription (made by the stream itself, never published). It carries a
 * catch-up cursor from before the interruption, minus the time a write with
 * an earlier id may still land, so catching up from it skips nothing.
 */
export interface FeedInterrupted {
  kind: 'FeedInterrupted';
  roomName: string;
  resumeCursor: string;
}

/** The end of a subscriber's access, made by its own subscription (never published): delivered as its error. */
export interface AccessEnded {
  kind: 'AccessEnded';
  roomName: string;
  error: AppError;
}

/** What a roomEvents subscription yields. */
export type FeedItem = RoomEvent | FeedInterrupted | AccessEnded;

export interface FeedAccess {
  /** Why the subscriber may no longer follow the room, or null while they may: read fresh. */
  now(): Promise<AppError | null>;
  /** The same, from a read at most Limits.room.participationRecheckMs old. */
  recent(): Promise<AppError | null>;
}

/**
 * A subscriber's view of a room's channel: skips its own typing, and ends
 * after the room is deleted or after the subscriber leaves it (that event is
 * still delivered, so the client knows why the stream ended). Those events can
 * be lost on the way, so delivery re-checks access too (see recheckedStream).
 */
export async function roomEventStream(
  services: { pubsub: PubSub; clock: Clock; logger: Logger; config: Config },
  roomName: string,
  login: string,
  access: FeedAccess,
): Promise<AsyncIterableIterator<FeedItem>> {
  const settleMs = catchUpSettleMs(services.config.cassandra.requestTimeoutMs);
  const events = await eventStream<RoomEvent | FeedInterrupted>(services.pubsub, roomChannel(roomName), {
    clock: services.clock,
    event: (lostAt) => ({ kind: 'FeedInterrupted', roomName, resumeCursor: catchUpCursorBefore(lostAt, settleMs) }),
  });
  // Checked again now that the stream is live: a leave or delete that
  // committed before this point is seen here, any later one arrives as an event.
  let denied: AppError | null;
  try {
    denied = await access.now();
  } catch (err) {
    await events.return?.();
    throw err;
  }
  if (denied) {
    await events.return?.();
    throw denied;
  }
  const isFinal = (event: RoomEvent | FeedInterrupted) =>
    event.kind === 'RoomDeleted' || (event.kind === 'ParticipantLeft' && event.user.login === login);
  const shaped = shapeStream(events, {
    skip: (event) => event.kind === 'TypingStarted' && event.user.login === login,
    endsAfter: isFinal,
  });
  return recheckedStream(shaped, {
    clock: services.clock,
    // The events that end the stream anyway are delivered as they are.
    needsCheck: (event) => !isFinal(event),
    check: access.recent,
    onCheckFailed: (err) => services.logger.warn({ err, roomName }, 'room access re-check failed; delivering'),
    ended: (error) => ({ kind: 'AccessEnded', roomName, error }),
  });
}

/** A catch-up (`messages(before:)`) cursor for everything that may have committed after `at`. */
function catchUpCursorBefore(at: Date, settleMs: number): string {
  const from = new Date(at.getTime() - settleMs);
  return encodeHistoryCursor({ bucket: dayBucket(from), id: maxTimeUuid(from).toString() });
}

/** Whether an access check made at `at` still holds at `now` (a clock that went back counts as stale). */
export function isFresh(at: number, now: number): boolean {
  return now >= at && now - at < Limits.room.participationRecheckMs;
}

/**
 * Re-checks access when an event is about to be delivered, at most once per
 * Limits.room.participationRecheckMs since the last check (by the services'
 * clock). When access has ended, the stream yields `ended(error)` instead of
 * the event and stops. A check that fails (the database unreachable) lets the
 * event through and is tried again on the next one: a blip must not cut every
 * subscription. Built on transformStream, which releases the source on an early unsubscribe.
 */
function recheckedStream(
  source: AsyncIterableIterator<RoomEvent | FeedInterrupted>,
  opts: {
    clock: Clock;
    needsCheck: (event: RoomEvent | FeedInterrupted) => boolean;
    check: () => Promise<AppError | null>;
    onCheckFailed: (err: unknown) => void;
    ended: (error: AppError) => AccessEnded;
  },
): AsyncIterableIterator<FeedItem> {
  // The stream was created right after a fresh check.
  let checkedAt = opts.clock.now().getTime();
  return transformStream<RoomEvent | FeedInterrupted, FeedItem>(source, async (event) => {
    const now = opts.clock.now().getTime();
    if (!opts.needsCheck(event) || isFresh(checkedAt, now)) return { emit: event };
    let denied: AppError | null = null;
    try {
      denied = await opts.check();
      checkedAt = now;
    } catch (err) {
      opts.onCheckFailed(err);
    }
    return denied ? { emit: opts.ended(denied), end: true } : { emit: event };
  });
}
