/** The live side of a room: subscribing to its events and announcing typing. */
import { refreshLoaders, type Context } from '../../context.js';
import { Limits } from '../../limits.js';
import { requireViewer } from '../guards.js';
import { roomChannel, roomEventStream, type RoomEvent } from './feed.js';
import { requireParticipation, viewerPerson } from './rooms.js';
import { validRoomName } from './validation.js';

/** roomEvents: participants only, checked when subscribing (and once more when the stream is live). */
export async function subscribeRoomEvents(ctx: Context, rawName: string): Promise<AsyncIterableIterator<RoomEvent>> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  await requireParticipation(ctx, name);
  return roomEventStream(ctx.services.pubsub, name, viewer.login, async () => {
    await requireParticipation(ctx, name);
  });
}

/** Each event is resolved with fresh loaders: a subscription lives for hours. */
export function resolveRoomEvent(ctx: Context, event: RoomEvent): RoomEvent {
  refreshLoaders(ctx);
  return event;
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
