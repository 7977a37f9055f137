/** The live side of a room: subscribing to its events and announcing typing. */
import { refreshLoaders, type Context } from '../../context.js';
import { Limits } from '../../../limits.js';
import { requireViewer } from '../../shared/guards.js';
import { roomChannel, roomEventStream, type FeedInterrupted, type FeedItem, type RoomEvent } from './feed.js';
import { catchUpSettleMs } from '../model.js';
import { catchUpCursorBefore, catchUpFrom, messageCursor, settledHorizon } from './message-cursors.js';
import { ReplayThenLive } from './resume.js';
import { decodeHistoryCursor } from '../../../pagination.js';
import { FollowedRoom } from './feed-access.js';
import { requireParticipation, viewerPerson } from '../access/access.js';
import { validRoomName } from '../validation.js';
import { requireMay, requireNotLivestream } from '../access/permissions.js';

/**
 * roomEvents: participants only, checked when subscribing, once more when the
 * stream is live, and on delivery at most once per re-check window.
 */
export async function subscribeRoomEvents(
  ctx: Context,
  rawName: string,
  after: string | null | undefined,
): Promise<AsyncIterableIterator<FeedItem>> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  // An EventSource that reconnects sends the last event's id (its cursor) as Last-Event-ID.
  const resumeAt = after ?? ctx.lastEventId;
  const from = resumeAt ? decodeHistoryCursor(after ? 'after' : 'Last-Event-ID', resumeAt, 'day') : null;
  const followed = await requireParticipation(ctx, name);
  // The subscriber is online in the room for as long as this feed is open (see presence.ts).
  const { presence } = ctx.services.rooms;
  const person = followed.participants.find((p) => p.login === viewer.login) ?? (await viewerPerson(ctx));
  // A livestream keeps no presence: its watchers are many, and its feed carries messages only.
  const tracked = followed.kind !== 'LIVESTREAM';
  const left = () => void (tracked && presence.exited(name, person).catch((err) => ctx.services.logger.warn({ err }, 'presence exit failed')));
  const live = await roomEventStream(ctx.services, followed, viewer.login, new FollowedRoom(ctx.services, followed, viewer.login), left);
  if (tracked) await presence.entered(name, person).catch((err) => ctx.services.logger.warn({ err }, 'presence entry failed'));
  return from ? new ReplayThenLive(ctx.services, followed, catchUpFrom(from), live) : live;
}

/**
 * The cursor an event carries, to resume from with roomEvents(after:). A
 * message's is its place in history, with the settled horizon while it is
 * later than that (message-cursors.ts): posted on another instance, an older
 * message may reach this feed after it. Any other event's is the catch-up
 * point of the moment it is delivered. Resuming may repeat a few messages
 * (key them by id), never skips one.
 */
export function eventCursor(ctx: Context, event: RoomEvent | FeedInterrupted): string {
  if (event.kind === 'MessagePosted') return messageCursor(event.message, settledHorizon(ctx.services));
  const { clock, config } = ctx.services;
  return catchUpCursorBefore(clock.now(), catchUpSettleMs(config.cassandra.requestTimeoutMs));
}

/** Each event is resolved with fresh loaders: a subscription lives for hours. The end of access is its error. */
export function resolveRoomEvent(ctx: Context, item: FeedItem): RoomEvent | FeedInterrupted {
  if (item.kind === 'AccessEnded') throw item.error;
  refreshLoaders(ctx);
  return item;
}

/**
 * Publishes TypingStarted to the room's other subscribers, at most once per
 * 2 s per user and room; writes nothing to Cassandra. The limit is kept by
 * services.rateLimiter: Redis keys shared by every instance when REDIS_URL is
 * set, an in-memory window per instance otherwise. Returns false when the call
 * fell inside the window and nothing was published.
 */
export async function sendTyping(ctx: Context, rawName: string): Promise<boolean> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  const room = await requireParticipation(ctx, name);
  requireNotLivestream(room, 'typing');
  // A guest, who reads and does not post, does not type either.
  requireMay(room, viewer.login, 'POST', 'type in it');
  const { rateLimiter, pubsub } = ctx.services;
  const window = await rateLimiter.increment(`typing:${name}:${viewer.login}`, Limits.room.typingIntervalSeconds);
  // count 0: the limiter is unavailable and fails open.
  if (window.count > 1) return false;
  const event: RoomEvent = { kind: 'TypingStarted', roomName: name, user: await viewerPerson(ctx) };
  await pubsub.publish(roomChannel(name), event);
  return true;
}
