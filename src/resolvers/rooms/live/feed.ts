/**
 * The live room feed: one pub/sub channel per room, events published only
 * after their write committed, and per room in the order this instance
 * committed them (ids are made and turns taken at the same moment, so the
 * feed's order is the history's order).
 */
import type { Logger } from 'pino';

import { catchUpSettleMs } from '../model.js';
import { catchUpCursorBefore } from './message-cursors.js';
import type { Config } from '../../../config.js';
import { eventStream, Interruption, type PubSub, type StreamRules, type StreamStep } from '../../../pubsub/pubsub.js';
import type { AppError } from '../../../errors.js';
import type { Clock } from '../../../clock.js';
import { Limits } from '../../../limits.js';
import type { ChatUser } from '../../../db/rooms/chat-user.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';
import type { RoomKind } from '../../../db/rooms/rooms.js';

export const roomChannel = (roomName: string) => `room.${roomName}`;

/** Room events as they travel through pub/sub (JSON). */
export type RoomEvent =
  | { kind: 'MessagePosted'; roomName: string; message: MessageRecord }
  | { kind: 'MessageHidden'; roomName: string; message: MessageRecord }
  | { kind: 'MessageEdited'; roomName: string; message: MessageRecord }
  | { kind: 'MessageDeleted'; roomName: string; message: MessageRecord }
  /** countedAt: when the counts were read (ms): of two such events for one message, the later count is the current one. */
  | { kind: 'ReactionChanged'; roomName: string; message: MessageRecord; counts: Array<{ emoji: string; count: number }>; countedAt: number }
  | { kind: 'MessagePinned'; roomName: string; message: MessageRecord }
  | { kind: 'MessageUnpinned'; roomName: string; message: MessageRecord }
  | { kind: 'ParticipantJoined'; roomName: string; user: ChatUser }
  | { kind: 'ParticipantLeft'; roomName: string; user: ChatUser }
  | { kind: 'TypingStarted'; roomName: string; user: ChatUser }
  | { kind: 'RoomDeleted'; roomName: string; deletedBy: ChatUser }
  | { kind: 'ParticipantRemoved'; roomName: string; user: ChatUser; by: ChatUser; banned: boolean }
  | { kind: 'ParticipantMuted'; roomName: string; user: ChatUser; until: string | null; by: ChatUser }
  | { kind: 'SlowModeChanged'; roomName: string; seconds: number | null; by: ChatUser }
  | { kind: 'ModeratorChanged'; roomName: string; user: ChatUser; moderator: boolean; by: ChatUser }
  /** A poll's votes changed (coalesced per window): the message, whose poll is read as it is when resolved. */
  | { kind: 'PollUpdated'; roomName: string; message: MessageRecord }
  /** The room's custom data changed (JSON text; null: cleared). */
  | { kind: 'RoomMetadataChanged'; roomName: string; metadata: string | null; by: ChatUser }
  /** The logins whose read markers moved (coalesced per window): their seenBy may have changed. */
  | { kind: 'RoomReadUpdated'; roomName: string; readers: string[] };

/**
 * What a livestream room's feed carries: its messages, and what ends a watcher's feed (the room deleted, a watcher
 * removed, a watcher leaving: each subscription skips the leaves of others). Typing, presence, joins, reactions,
 * polls' votes and read markers are not published: in a room of many watchers, each would be fanned out to every one.
 */
const LIVESTREAM_EVENTS: ReadonlySet<RoomEvent['kind']> = new Set<RoomEvent['kind']>([
  'MessagePosted',
  'MessageEdited',
  'MessageDeleted',
  'MessageHidden',
  'MessagePinned',
  'MessageUnpinned',
  'RoomDeleted',
  'ParticipantRemoved',
  'ParticipantLeft',
]);

/** Whether a room of `kind` publishes events of `eventKind` to its feed: what it does not is not even gathered. */
export const carries = (kind: RoomKind, eventKind: RoomEvent['kind']): boolean => kind !== 'LIVESTREAM' || LIVESTREAM_EVENTS.has(eventKind);

/** Whether a room of `kind` publishes `event` to its feed. */
export const carriedBy = (kind: RoomKind, event: RoomEvent): boolean => carries(kind, event.kind);

/** A place in a room's publish order, taken before the write and filled (or given up) after it. */
export interface Turn {
  /** Publishes right after every earlier turn of the room has; resolves when these events are out. */
  publish(events: RoomEvent[]): Promise<void>;
  /** The write failed: publish nothing, let later turns go. */
  cancel(): void;
}

/**
 * Chains each room's publishes on a promise queue: a turn taken later never
 * publishes before an earlier one, even when its write commits first. A turn
 * waits for the earlier ones to be sent, not answered: the pub/sub keeps the
 * order of what one instance sends (Redis runs one connection's commands in
 * order), so a room's events are pipelined. Waiting for each answer capped a
 * room at one event per round trip, about 100 a second on a busy instance.
 * One per pub/sub (that is, per app instance); queues of idle rooms are dropped.
 */
export class RoomSequencer {
  /** Per room, the last turn's promise to have sent its events (never rejects). */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(
    private readonly pubsub: PubSub,
    private readonly logger: Logger,
  ) {}

  /** A turn in the room's order; what the room's kind does not carry (carriedBy) is left out of what it publishes. */
  take(room: { name: string; kind: RoomKind }): Turn {
    const roomName = room.name;
    let fill!: (events: RoomEvent[]) => void;
    const filled = new Promise<RoomEvent[]>((resolve) => (fill = resolve));
    const previous = this.tails.get(roomName) ?? Promise.resolve();
    // Sent in one synchronous loop, so a turn's events leave in its order, after every earlier turn's. The
    // answers are wrapped, not adopted: the next turn waits for this one's sending, not for its answers.
    const sent = previous.then(async () => {
      const events = await filled;
      return { answered: Promise.all(events.map((event) => this.send(roomName, event))) };
    });
    this.tails.set(roomName, sent);
    void sent.finally(() => {
      if (this.tails.get(roomName) === sent) this.tails.delete(roomName);
    });
    return {
      publish: async (events) => {
        fill(events.filter((event) => carriedBy(room.kind, event)));
        await (await sent).answered;
      },
      cancel: () => fill([]),
    };
  }

  /** A failed publish loses one live event, never the message (clients refetch with `before`). */
  private send(roomName: string, event: RoomEvent): Promise<void> {
    return this.pubsub
      .publish(roomChannel(roomName), event)
      .catch((err) => this.logger.warn({ err: (err as Error).message, roomName, kind: event.kind }, 'room event not published (subscribers are told to catch up when pub/sub is back)'));
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
 * be lost on the way, so delivery re-checks access too (see RoomFeed.recheck).
 */
export async function roomEventStream(
  services: { pubsub: PubSub; clock: Clock; logger: Logger; config: Config },
  room: { name: string; kind: RoomKind },
  login: string,
  access: FeedAccess,
  onEnded?: () => void,
): Promise<AsyncIterableIterator<FeedItem>> {
  const roomName = room.name;
  const feed = new RoomFeed(services, roomName, login, access, room.kind === 'LIVESTREAM', onEnded);
  const events = await eventStream(services.pubsub, roomChannel(roomName), feed);
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
  feed.checkedAt = services.clock.now().getTime();
  return events;
}

/** Whether an access check made at `at` still holds at `now` (a clock that went back counts as stale). */
export function isFresh(at: number, now: number): boolean {
  return now >= at && now - at < Limits.room.participationRecheckMs;
}

/**
 * The rules of one roomEvents stream, held for the subscription's life: a
 * few fields, where a chain of stream wrappers and closures per rule cost
 * several times as much per idle subscriber.
 */
class RoomFeed implements StreamRules<RoomEvent | FeedInterrupted, FeedItem> {
  /** When access was last checked (by the clock): the stream starts right after a fresh check. */
  checkedAt: number;
  private readonly interruption = new Interruption();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly settleMs: number;

  constructor(
    services: { clock: Clock; logger: Logger; config: Config },
    private readonly roomName: string,
    private readonly login: string,
    private readonly access: FeedAccess,
    /** A livestream's watcher: told of their own leave (it ends the feed), not of others'. */
    private readonly watching: boolean,
    private readonly onEnded?: () => void,
  ) {
    this.clock = services.clock;
    this.logger = services.logger;
    this.settleMs = catchUpSettleMs(services.config.cassandra.requestTimeoutMs);
    this.checkedAt = this.clock.now().getTime();
  }

  ended(): void {
    this.onEnded?.();
  }

  /** Once delivery is back after an interruption, the marker telling the subscriber to catch up. */
  deliveryChanged(live: boolean, lostSince?: Date): FeedInterrupted | undefined {
    const lostAt = this.interruption.changed(live, lostSince, this.clock.now());
    return lostAt && { kind: 'FeedInterrupted', roomName: this.roomName, resumeCursor: catchUpCursorBefore(lostAt, this.settleMs) };
  }

  step(event: RoomEvent | FeedInterrupted): StreamStep<FeedItem> | Promise<StreamStep<FeedItem>> {
    if (event.kind === 'TypingStarted' && event.user.login === this.login) return { skip: true };
    if (this.watching && event.kind === 'ParticipantLeft' && event.user.login !== this.login) return { skip: true };
    // The events that end the stream anyway are delivered as they are.
    const gone = (event.kind === 'ParticipantLeft' || event.kind === 'ParticipantRemoved') && event.user.login === this.login;
    if (event.kind === 'RoomDeleted' || gone) {
      return { emit: event, end: true };
    }
    const now = this.clock.now().getTime();
    return isFresh(this.checkedAt, now) ? { emit: event } : this.recheck(event, now);
  }

  /**
   * Re-checks access when an event is about to be delivered, at most once per
   * Limits.room.participationRecheckMs since the last check (by the services'
   * clock). When access has ended, the stream yields AccessEnded instead of
   * the event and stops. A check that fails (the database unreachable) lets the
   * event through and is tried again on the next one: a blip must not cut every
   * subscription.
   */
  private async recheck(event: RoomEvent | FeedInterrupted, now: number): Promise<StreamStep<FeedItem>> {
    let denied: AppError | null = null;
    try {
      denied = await this.access.recent();
      this.checkedAt = now;
    } catch (err) {
      this.logger.warn({ err, roomName: this.roomName }, 'room access re-check failed; delivering');
    }
    return denied ? { emit: { kind: 'AccessEnded', roomName: this.roomName, error: denied }, end: true } : { emit: event };
  }
}
