/** The live side of a room: subscribing to its events and announcing typing. */
import { refreshLoaders, type Context } from '../../context.js';
import { Limits } from '../../limits.js';
import { requireViewer } from '../shared/guards.js';
import { roomChannel, roomEventStream, type FeedInterrupted, type FeedItem, type RoomEvent } from './feed.js';
import { FollowedRoom } from './feed-access.js';
import { requireParticipation, viewerPerson } from './access.js';
import { validRoomName } from './validation.js';

/**
 * roomEvents: participants only, checked when subscribing, once more when the
 * stream is live, and on delivery at most once per re-check window.
 */
export async function subscribeRoomEvents(ctx: Context, rawName: string): Promise<AsyncIterableIterator<FeedItem>> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  const followed = await requireParticipation(ctx, name);
  return roomEventStream(ctx.services, name, viewer.login, new FollowedRoom(ctx.services, followed, viewer.login));
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
  await requireParticipation(ctx, name);
  const { rateLimiter, pubsub } = ctx.services;
  const window = await rateLimiter.increment(`typing:${name}:${viewer.login}`, Limits.room.typingIntervalSeconds);
  // count 0: the limiter is unavailable and fails open.
  if (window.count > 1) return false;
  const event: RoomEvent = { kind: 'TypingStarted', roomName: name, user: await viewerPerson(ctx) };
  await pubsub.publish(roomChannel(name), event);
  return true;
}
