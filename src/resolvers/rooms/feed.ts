/**
 * The live room feed: one pub/sub channel per room, events published only
 * after their write committed, and per room in the order this instance
 * committed them (ids are made and turns taken at the same moment, so the
 * feed's order is the history's order).
 */
import type { Logger } from 'pino';
import type { ChatUser } from '../../db/chat-user.js';
import type { MessageRecord } from '../../db/room-messages.js';
import { eventStream, shapeStream, type PubSub } from '../../pubsub/pubsub.js';

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
class RoomSequencer {
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
          .catch((err) => this.logger.error({ err, roomName, kind: event.kind }, 'failed to publish room event'));
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

const sequencers = new WeakMap<PubSub, RoomSequencer>();

export function takeTurn(services: { pubsub: PubSub; logger: Logger }, roomName: string): Turn {
  let sequencer = sequencers.get(services.pubsub);
  if (!sequencer) {
    sequencer = new RoomSequencer(services.pubsub, services.logger);
    sequencers.set(services.pubsub, sequencer);
  }
  return sequencer.take(roomName);
}

/**
 * A subscriber's view of a room's channel: skips its own typing, and ends
 * after the room is deleted or after the subscriber leaves it (that event is
 * still delivered, so the client knows why the stream ended).
 */
export async function roomEventStream(
  pubsub: PubSub,
  roomName: string,
  login: string,
  stillParticipant: () => Promise<void>,
): Promise<AsyncIterableIterator<RoomEvent>> {
  const events = await eventStream<RoomEvent>(pubsub, roomChannel(roomName));
  // Checked again now that the stream is live: a leave or delete that
  // committed before this point is seen here, any later one arrives as an event.
  try {
    await stillParticipant();
  } catch (err) {
    await events.return?.();
    throw err;
  }
  return shapeStream(events, {
    skip: (event) => event.kind === 'TypingStarted' && event.user.login === login,
    endsAfter: (event) => event.kind === 'RoomDeleted' || (event.kind === 'ParticipantLeft' && event.user.login === login),
  });
}
