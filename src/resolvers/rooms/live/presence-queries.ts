/** Reading presence: a room's online participants, its presence feed and a user's last sighting (see presence.ts). */
import type { Context } from '../../context.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { UserRecord } from '../../../db/accounts/users.js';
import { forbidden } from '../../../errors.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant } from '../access/access.js';
import { distinctPeople, personAsUser } from '../people.js';
import { refreshLoaders } from '../../context.js';
import { eventStream, type StreamRules, type StreamStep } from '../../../pubsub/pubsub.js';
import { presenceChannel, type PresenceChange } from './presence.js';
import { requireParticipation } from '../access/access.js';
import { FollowedRoom } from './feed-access.js';
import { Limits } from '../../../limits.js';
import type { Clock } from '../../../clock.js';
import { validRoomName } from '../validation.js';
import { requireNotLivestream } from '../access/permissions.js';
import { userLoader } from '../../accounts/reads.js';

export async function onlineParticipants(ctx: Context, room: RoomRecord): Promise<UserRecord[]> {
  const viewer = requireViewer(ctx);
  if (!isParticipant(room, viewer.login)) throw forbidden('Only participants see who is online');
  if (room.kind === 'LIVESTREAM') return []; // it keeps no presence
  const online = new Set(await ctx.services.rooms.presence.online(room.name));
  return distinctPeople(room.participants)
    .filter((p) => online.has(p.login))
    .map((p) => personAsUser(ctx, p));
}

/**
 * The later of presence's sighting (Redis: heartbeats, while it keeps them)
 * and the one stored when the user last went offline (Cassandra).
 */
export async function lastSeenAt(ctx: Context, login: string): Promise<Date | null> {
  const [live, user] = await Promise.all([ctx.services.rooms.presence.lastSeen(login), userLoader(ctx).load(login)]);
  const stored = user?.lastSeenAt ?? null;
  if (!live || !stored) return live ?? stored;
  return live > stored ? live : stored;
}

/**
 * A subscriber hears of others coming and going, not of themselves, while they take part: access is checked again
 * as roomEvents checks it (at most once per Limits.room.participationRecheckMs, one read per instance and window),
 * and the stream ends once they were removed, banned or left, or the room is gone. Its end releases the sweep.
 */
class OthersOnly implements StreamRules<PresenceChange, PresenceChange> {
  private checkedAt: number;

  constructor(
    private readonly login: string,
    private readonly access: FollowedRoom,
    private readonly clock: Clock,
    private readonly release: () => void,
  ) {
    this.checkedAt = clock.now().getTime();
  }

  async step(change: PresenceChange): Promise<StreamStep<PresenceChange>> {
    if (change.user.login === this.login) return { skip: true };
    const now = this.clock.now().getTime();
    if (now - this.checkedAt >= Limits.room.participationRecheckMs) {
      // A failed check (storage unreachable) lets the event through, as roomEvents does: a blip must not cut feeds.
      const denied = await this.access.recent().catch(() => null);
      this.checkedAt = now;
      if (denied) return { end: true };
    }
    return { emit: change };
  }
  ended(): void {
    this.release();
  }
}

/** roomPresence: participants only. Following it does not make one online: an open roomEvents feed does. */
export async function subscribeRoomPresence(ctx: Context, rawName: string): Promise<AsyncIterableIterator<PresenceChange>> {
  const viewer = requireViewer(ctx);
  const room = await requireParticipation(ctx, validRoomName('roomName', rawName));
  requireNotLivestream(room, 'presence');
  const release = ctx.services.rooms.presence.follow(room.name);
  try {
    const access = new FollowedRoom(ctx.services, room, viewer.login);
    return await eventStream(ctx.services.pubsub, presenceChannel(room.name), new OthersOnly(viewer.login, access, ctx.services.clock, release));
  } catch (err) {
    release();
    throw err;
  }
}

export function presenceEvent(ctx: Context, change: PresenceChange): PresenceChange {
  refreshLoaders(ctx);
  return change;
}
