/**
 * Who may keep following a room's feed. Checked when subscribing, once more
 * when the stream is live, and again on delivery (at most once per
 * Limits.room.participationRecheckMs): the events that end a stream (the
 * subscriber's own ParticipantLeft, RoomDeleted) travel through pub/sub and
 * can be lost, and a subscription must not outlive its subscriber's place in
 * the room because of that.
 */
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { Services } from '../../services.js';
import { forbidden, notFound, type AppError } from '../../../errors.js';
import { isFresh, type FeedAccess } from './feed.js';
import { isParticipant, seesRoom } from '../access/access.js';

/** Why `login` may no longer follow the room created at `followedCreatedAt`, or null while they may. */
export function accessEnded(followedCreatedAt: number, current: RoomRecord | undefined, login: string): AppError | null {
  // Gone, or the name now belongs to another room: the one followed was deleted.
  if (!current || current.createdAt.getTime() !== followedCreatedAt) return notFound('Room');
  // A private room is to a former participant as a room that does not exist (seesRoom): gone, not forbidden.
  if (!seesRoom(current, login)) return notFound('Room');
  if (!isParticipant(current, login)) return forbidden('You no longer take part in this room');
  return null;
}

/**
 * A subscriber's access to the room they follow. It keeps the room's name and
 * creation time, not the row read when subscribing (participants and all):
 * the subscription holds this for hours.
 */
export class FollowedRoom implements FeedAccess {
  private readonly name: string;
  private readonly createdAt: number;

  constructor(
    private readonly services: Pick<Services, 'stores' | 'rooms'>,
    followed: RoomRecord,
    private readonly login: string,
  ) {
    this.name = followed.name;
    this.createdAt = followed.createdAt.getTime();
  }

  async now(): Promise<AppError | null> {
    return accessEnded(this.createdAt, await this.services.stores.rooms.byName(this.name), this.login);
  }

  async recent(): Promise<AppError | null> {
    return accessEnded(this.createdAt, await this.services.rooms.recentReads.get(this.name), this.login);
  }
}

/**
 * Room rows read for these re-checks, shared by an instance's subscriptions:
 * a room with a thousand subscribers here costs one read per window, not a
 * thousand. A read is reused while younger than the window; failed reads are
 * not kept.
 */
export class RecentRoomReads {
  private readonly reads = new Map<string, { at: number; room: Promise<RoomRecord | undefined> }>();

  constructor(private readonly services: Pick<Services, 'stores' | 'clock'>) {}

  get(name: string): Promise<RoomRecord | undefined> {
    const now = this.services.clock.now().getTime();
    const hit = this.reads.get(name);
    if (hit && isFresh(hit.at, now)) return hit.room;
    const room = this.services.stores.rooms.byName(name);
    const entry = { at: now, room };
    this.reads.set(name, entry);
    room.catch(() => this.reads.get(name) === entry && this.reads.delete(name));
    if (this.reads.size > 10_000) {
      for (const [key, value] of this.reads) if (!isFresh(value.at, now)) this.reads.delete(key);
    }
    return room;
  }
}

