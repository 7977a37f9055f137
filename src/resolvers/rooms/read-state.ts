/**
 * Per-room read state: where the viewer has read up to, what is unread after
 * it (messages by others, not hidden, deleted or system ones), and how many
 * messages after it mention them.
 *
 * Cost. A post writes nothing per participant: one room_mentions row per
 * person it mentions, in its own batch. A read costs one read of the viewer's
 * markers (all rooms at once, per request), then per room a walk of its
 * history from the marker (the bucket table, then each day partition, at most
 * Limits.room.readState.scanRows rows) and one read of the mention rows after the marker.
 */
import type { Context } from '../context.js';
import type { Services } from '../services.js';

import type { RoomRecord } from '../../db/rooms/rooms.js';
import type { MarkerOutcome } from '../../db/rooms/read-state.js';
import { madeAfter, timeUuidDate } from '../../timeuuids.js';
import { TimeUuid } from '../../db/cassandra/client.js';
import { dayBucket } from '../../buckets.js';
import { badInput, conflict, forbidden } from '../../errors.js';
import { Limits } from '../../limits.js';
import { requireViewer } from '../shared/guards.js';
import { isParticipant, requireParticipation } from './access/access.js';
import { decodeMessageId } from './ids.js';
import { validRoomName } from './validation.js';
import { readMarkerMoved } from './seen-by.js';
import type { MessageRecord } from '../../db/rooms/messages/message-row.js';
import { messageLoader, readMarkersLoader, roomMessageKey } from './reads.js';

const { readState: limits } = Limits.room;

export interface RoomReadState {
  room: RoomRecord;
  /** The id of the newest message read (the stored timeuuid), null when none. */
  readUpTo: string | null;
  firstUnread: MessageRecord | null;
  unreadCount: number;
  /** More than Limits.room.readState.unreadCap messages are unread: unreadCount is the cap. */
  unreadCapped: boolean;
  mentionCount: number;
}

/** What counts as unread: someone else's message, shown as posted (not hidden, deleted or a system message). */
const counts = (m: MessageRecord, viewer: string) => m.author.login !== viewer && !m.systemMessage && m.visible && !m.deleted;

/** A marker that reads as none in this room (it predates it): what marking everything unread leaves. */
const beforeRoom = (room: RoomRecord) => TimeUuid.min(new Date(room.createdAt.getTime() - 1), 0).toString();

/** The marker if it belongs to this incarnation of the room (a room of the same name deleted before leaves none). */
function markerIn(room: RoomRecord, marker: string | null | undefined): string | null {
  return marker && timeUuidDate(marker) >= room.createdAt ? marker : null;
}

/** The viewer's read state in a room they take part in. */
export async function readStateOf(ctx: Context, room: RoomRecord): Promise<RoomReadState> {
  const viewer = requireViewer(ctx);
  if (!isParticipant(room, viewer.login)) throw forbidden('Only participants have a read state in a room');
  const { stores, clock } = ctx.services;
  const readUpTo = markerIn(room, (await readMarkersLoader(ctx).load(viewer.login)).get(room.name));
  const from = readUpTo ? { bucket: dayBucket(timeUuidDate(readUpTo)), id: readUpTo } : null;
  const readTo = new Date(clock.now().getTime() + Limits.room.clockSkewMs);
  const [mentions, walk] = await Promise.all([
    stores.readState.mentionsAfter(viewer.login, room.name, readUpTo, limits.scanRows),
    (async () => {
      let cursor = from;
      let unread = 0;
      let first: MessageRecord | null = null;
      // The unread messages walked, and the newest id walked (the walk covers everything up to it).
      const counted = new Set<string>();
      let reached: string | null = null;
      for (let scanned = 0; scanned < limits.scanRows; ) {
        const page = await stores.roomMessages.page(room, 'newer', cursor, limits.pageRows, readTo);
        for (const m of page.rows) {
          reached = m.messageId;
          if (!counts(m, viewer.login)) continue;
          first ??= m;
          unread += 1;
          counted.add(m.messageId);
        }
        scanned += page.rows.length;
        const last = page.rows.at(-1);
        if (!page.more || !last || unread > limits.unreadCap) return { unread, first, more: page.more, counted, reached };
        cursor = { bucket: last.bucket, id: last.messageId };
      }
      return { unread, first, more: true, counted, reached };
    })(),
  ]);
  // A mention counts when its message counts as unread: one the walk passed must be among those it counted (a
  // hidden or deleted message is not, whatever its mention row says); one past the walk's end counts as stored.
  // The mentions come oldest first from the marker, so those the walk covers (at most scanRows) are all read.
  const pastWalk = (id: string) => walk.more && (walk.reached === null || madeAfter(id, walk.reached));
  const mentionCount = mentions.filter((id) => walk.counted.has(id) || pastWalk(id)).length;
  return {
    room,
    readUpTo,
    firstUnread: walk.first,
    unreadCount: Math.min(walk.unread, limits.unreadCap),
    // Past the cap, or past what one read may scan with more to come: reported as capped.
    unreadCapped: walk.unread > limits.unreadCap || walk.more,
    mentionCount,
  };
}

/** The newest message read, through the request's message loader: one batch for every room of a room list. */
export async function lastReadMessage(ctx: Context, state: RoomReadState): Promise<MessageRecord | null> {
  if (!state.readUpTo) return null;
  return messageLoader(ctx).load(roomMessageKey(state.room.name, state.readUpTo));
}

/** A message id of this room, as the viewer gave it. */
function messageOfRoom(field: string, id: string, room: RoomRecord) {
  const key = decodeMessageId(field, id);
  if (key.roomName !== room.name || timeUuidDate(key.messageId) < room.createdAt) throw badInput(field, `${field} must be a message of this room`);
  return key;
}

/** Moves the viewer's marker forward to `upTo`; never back (an older id changes nothing). */
export async function markRoomRead(ctx: Context, rawName: string, upTo: string): Promise<RoomReadState> {
  const viewer = requireViewer(ctx);
  const room = await requireParticipation(ctx, validRoomName('roomName', rawName));
  const key = messageOfRoom('upTo', upTo, room);
  const at = timeUuidDate(key.messageId).getTime();
  let moved = false;
  const marker = markerSet(
    await ctx.services.stores.readState.change(viewer.login, room.name, (current) => {
      const mine = markerIn(room, current);
      if (mine && (timeUuidDate(mine).getTime() > at || (timeUuidDate(mine).getTime() === at && mine >= key.messageId))) return 'unchanged';
      moved = true;
      return key.messageId;
    }),
  );
  if (moved && marker === key.messageId) readMarkerMoved(ctx, room, viewer.login);
  readMarkersLoader(ctx).clear(viewer.login);
  return readStateOf(ctx, room);
}

/**
 * Marks `from` and everything after it unread again: the marker goes back to
 * the message before `from` (or to none). The one way back.
 */
export async function markRoomUnread(ctx: Context, rawName: string, from: string): Promise<RoomReadState> {
  const viewer = requireViewer(ctx);
  const room = await requireParticipation(ctx, validRoomName('roomName', rawName));
  const key = messageOfRoom('from', from, room);
  const { stores, clock } = ctx.services;
  const before = await stores.roomMessages.page(room, 'older', { bucket: key.bucket, id: key.messageId }, 1, clock.now());
  // Nothing before `from`: a marker from before the room (markerIn reads it as none), so the room's copy of the
  // marker (room_readers, for seenBy) moves with it as with any other value.
  const target = before.rows[0]?.messageId ?? beforeRoom(room);
  let moved = false;
  markerSet(
    await stores.readState.change(viewer.login, room.name, (current) => {
      moved = current !== target;
      return target;
    }),
  );
  if (moved) readMarkerMoved(ctx, room, viewer.login);
  readMarkersLoader(ctx).clear(viewer.login);
  return readStateOf(ctx, room);
}

/** A new participant has read everything up to their join. */
export async function readUpToJoin(services: Services, room: RoomRecord, login: string, joinMessageId: string): Promise<void> {
  markerSet(
    await services.stores.readState.change(login, room.name, (current) => {
      const mine = markerIn(room, current);
      return mine && timeUuidDate(mine) >= timeUuidDate(joinMessageId) ? 'unchanged' : joinMessageId;
    }),
  );
}

/**
 * The marker a change left, or CONFLICT when the user's other marker changes (on other instances: this one runs
 * them one at a time) kept getting in first for the whole bound: nothing changed, and the same call again is safe.
 */
function markerSet(outcome: MarkerOutcome): string | null {
  if (outcome.status === 'contended') throw conflict('Your read markers kept changing at the same time; nothing changed, try again');
  return outcome.marker;
}
