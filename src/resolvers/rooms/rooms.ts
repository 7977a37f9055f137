/**
 * Chat rooms: create, join, leave, delete, read and list. The rules that keep
 * rooms whole under concurrency live in the LWTs of src/db/rooms/rooms.ts; the
 * ordering of writes here keeps users.chat_rooms in step with them.
 */
import type { Context } from '../context.js';
import { unmoderated, type RoomKind, type RoomRecord, type RoomVisibility } from '../../db/rooms/rooms.js';
import type { WriteTimestamp } from '../../db/cassandra/write-timestamp.js';
import type { UserRecord } from '../../db/accounts/users.js';
import { AppError, ErrorCode, badInput, conflict, forbidden, notFound, LimitName, limitReached, unavailable } from '../../errors.js';
import { Limits } from '../../limits.js';
import { connection, type Connection } from '../../pagination.js';
import { pageSize, validLogin, validMetadata } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';
import { eachVisibleOrNull } from '../shared/nodes.js';
import { decodeRoomsCursor, encodeRoomsCursor } from './ids.js';
import { roomLoader } from './reads.js';
import { isParticipant, requireRoom, viewerPerson, visibleTo } from './access/access.js';
import { heirOf, KIND_DEFAULTS, requireMay } from './access/permissions.js';
import { recordAudit } from './access/audit-log.js';
import { completeNotice, dropNotice, listJoin, listNotice } from './room-notices.js';
import { bannedFrom } from './moderation.js';
import { confirmIntent, dropIntent, listIntent, runCleanup } from './room-cleanup.js';
import type { RoomCleanup } from '../../db/rooms/room-cleanups.js';
import { keyedRunOf, recordTimeFor } from '../idempotency/run.js';
import { isPossibleRoomName, normalizeRoomName, validBanner, validRoomName } from './validation.js';

export interface CreateRoomInput {
  name: string;
  banner?: string | null;
  /** Custom data: a JSON object (validMetadata). */
  metadata?: unknown;
  /** CHANNEL when left out. */
  kind?: RoomKind | null;
  /** The kind's (KIND_DEFAULTS) when left out. */
  visibility?: RoomVisibility | null;
}

export async function createRoom(ctx: Context, input: CreateRoomInput): Promise<RoomRecord> {
  requireViewer(ctx);
  const name = validRoomName('input.name', input.name);
  const banner = validBanner('input.banner', input.banner);
  const metadata = input.metadata == null ? null : validMetadata('input.metadata', input.metadata);
  const person = await viewerPerson(ctx);
  const { stores, clock } = ctx.services;
  const kind = input.kind ?? 'CHANNEL';
  const defaults = KIND_DEFAULTS[kind];
  const room: RoomRecord = {
    name,
    // Under an idempotency key, the key's time: a run again knows the room the first run made as its own.
    createdAt: recordTimeFor(ctx, clock.now()),
    banner,
    creator: person,
    creatorLogin: person.login,
    ownerLogin: person.login,
    ownerStored: null,
    participants: [person],
    seatOf: new Map([[person.login, 0]]),
    metadata,
    visibility: input.visibility ?? defaults.visibility,
    kind,
    memberGrants: defaults.memberGrants,
    ...unmoderated(),
  };
  // The creator's list first: a request lost after the insert applied leaves the room listed. If the insert
  // loses, the name belongs to a room the entry must not name, unless the creator is in that room already.
  await stores.rooms.addToUser(person.login, name);
  if (!(await stores.rooms.insertIfNotExists(room))) {
    const existing = await stores.rooms.byName(name);
    if (!existing || !isParticipant(existing, person.login)) await stores.rooms.removeFromUser(person.login, name);
    // No room of that name after all: the insert's outcome was unknown twice, and it did not apply.
    if (!existing) throw unavailable('storage');
    if (keyedRunOf(ctx) && existing.creatorLogin === person.login && existing.createdAt.getTime() === room.createdAt.getTime()) return existing;
    throw new AppError(ErrorCode.ROOM_EXISTS, `The room "${name}" exists`, { field: 'input.name' });
  }
  return room;
}

export async function joinRoom(ctx: Context, rawName: string): Promise<RoomRecord> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  const room = await requireRoom(ctx, name);
  if (isParticipant(room, viewer.login)) return room; // joining twice is harmless and says nothing
  if (room.visibility === 'ON_REQUEST' && room.ownerLogin !== viewer.login) {
    throw forbidden(`The room "${name}" takes requests to join: ask with requestToJoin, and a moderator's approval invites you`);
  }
  // The owner comes back into their room whatever its visibility; anyone else joins only a public one.
  return enterRoom(ctx, room, room.ownerLogin === viewer.login ? 'invited' : 'open');
}

/** LIMIT_REACHED: the room holds as many participants as it may. */
export const roomFull = (name: string) =>
  limitReached(LimitName.PARTICIPANTS_PER_ROOM, Limits.room.maxParticipants, `The room "${name}" is full (${Limits.room.maxParticipants} participants)`);

/**
 * The viewer joins the room as read: by joinRoom ('open': the room must still be public) or by an accepted
 * invitation ('invited'). BANNED, or NOT_FOUND when the room is gone (or, open, made private) meanwhile.
 */
export async function enterRoom(ctx: Context, room: RoomRecord, how: 'open' | 'invited'): Promise<RoomRecord> {
  const { name } = room;
  if (room.banned.has(requireViewer(ctx).login)) throw bannedFrom(name);
  // Refused at once on the row just read; joins racing for the last seats are held to the cap by the join's LWT,
  // which takes a seat (db/rooms/seats.ts).
  if (room.participants.length >= Limits.room.maxParticipants) throw roomFull(name);
  const person = await viewerPerson(ctx);
  const { services } = ctx;
  const { stores, logger } = services;
  // The user's list and the listing before the LWT: whatever happens to this request after it, the join is
  // completed, or its entry in the list taken back (room-notices.ts).
  const listed = await listJoin(services, name, person.login);
  const joined = await stores.rooms.addParticipantIfExists(room, person, how);
  if (joined !== 'joined') {
    await Promise.all([stores.rooms.removeFromUser(person.login, name), dropNotice(services, listed)]);
    if (joined === 'full') throw roomFull(name);
    if (joined === 'busy') throw conflict(`So many people are joining "${name}" at once that no seat was left for you after several tries; try again`);
    throw joined === 'banned' ? bannedFrom(name) : notFound('Room');
  }
  // The join applied: the user is a participant whatever follows. What follows is completed later if it fails now.
  await completeNotice(services, room, person, listed).catch((err) =>
    logger.warn({ err, room: name }, 'joined; the join message or read marker is left to the room notices job'),
  );
  return { ...room, participants: [...room.participants, person] };
}

/**
 * The viewer leaves the room. The owner leaving hands the ownership on (heirOf, permissions.ts) in the same LWT;
 * alone in it, they keep it without taking part. Each leave asks the owner to be the one read (db/rooms/rooms.ts),
 * so one racing the transfer of the ownership to the leaver is read again and becomes the owner's leave.
 */
export async function leaveRoom(ctx: Context, rawName: string): Promise<boolean> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  const { stores, logger } = ctx.services;
  let room = visibleTo(ctx, await stores.rooms.byName(name));
  // Remove the exact stored elements: names in them may predate a profile change.
  const entriesIn = (r: RoomRecord | null | undefined) => r?.participants.filter((p) => p.login === viewer.login) ?? [];
  if (!room || entriesIn(room).length === 0) {
    // Gone already, not in it (or a private room the user is not in): make sure the user's list does not keep it.
    await stores.rooms.removeFromUser(viewer.login, name);
    if (!room) throw notFound('Room');
    return false;
  }
  // Before the write: no invitation they still hold lets them back in once they are out.
  await stores.invitations.drop(viewer.login, name);
  // Listed before the write: the leave message is written whatever happens to this request after it.
  const listed = await listNotice(ctx.services, { roomName: name, login: viewer.login, kind: 'leave' });
  let heir: string | null = null;
  for (let attempt = 0; ; attempt++) {
    heir = heirOf(room, viewer.login);
    if ((await stores.rooms.leave(room, viewer.login, entriesIn(room), heir)) === 'left') break;
    const now = await stores.rooms.byNameSerial(name);
    if (!now || entriesIn(now).length === 0 || attempt + 1 >= Limits.room.leaveAttempts) {
      // Deleted, or removed by someone else meanwhile: no leave of this request's applied. Still in: ask again.
      await dropNotice(ctx.services, listed);
      if (now && entriesIn(now).length > 0) {
        await stores.rooms.addToUser(viewer.login, name);
        throw conflict('The room kept changing while you were leaving it; try again');
      }
      if (!now) throw notFound('Room');
      return false;
    }
    room = now;
  }
  if (heir) await recordAudit(ctx, room, { action: 'OWNERSHIP_TRANSFERRED', target: heir, details: 'as the owner left' });
  const person = await viewerPerson(ctx);
  await completeNotice(ctx.services, room, person, listed).catch((err) =>
    logger.warn({ err, room: name }, 'left; the leave message is left to the room notices job'),
  );
  return true;
}

/**
 * The owner hands the ownership of the room to a participant, who becomes its OWNER (and stops being a moderator);
 * the former owner stays as a member. FORBIDDEN for anyone else; BAD_USER_INPUT (field login) for someone who does
 * not take part. An LWT asks the owner to be the one read and the heir to take part: of a transfer and the heir's
 * leave racing each other, either the leave comes first (the transfer is refused) or the heir leaves as the owner.
 */
export async function transferRoomOwnership(ctx: Context, rawName: string, rawLogin: string): Promise<RoomRecord> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  const login = validLogin('login', rawLogin.trim().toLowerCase());
  const { stores } = ctx.services;
  const check = (room: RoomRecord) => {
    requireMay(room, viewer.login, 'TRANSFER_OWNERSHIP', 'hand its ownership on');
    const entry = room.participants.find((p) => p.login === login);
    if (!entry) throw badInput('login', `${login} does not take part in the room`);
    return entry;
  };
  const room = await requireRoom(ctx, name);
  const heir = check(room);
  if (room.ownerLogin === login) return room;
  if (!(await stores.rooms.transferOwnership(room, heir))) {
    const now = await requireRoom(ctx, name);
    if (now.ownerLogin === login) return now;
    check(now);
    throw conflict(`The room "${name}" changed meanwhile; try again`);
  }
  await recordAudit(ctx, room, { action: 'OWNERSHIP_TRANSFERRED', target: login });
  return { ...room, ownerLogin: login, ownerStored: login, moderators: room.moderators.filter((m) => m !== login) };
}

/** Whose room lists and read state may hold the room: its participants and its creator. */
const roomLogins = (room: RoomRecord): string[] => [...room.participants.map((p) => p.login), room.creatorLogin];

export async function deleteRoom(ctx: Context, rawName: string): Promise<boolean> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  const { stores } = ctx.services;
  let room = await requireRoom(ctx, name);
  // The creator is the authenticated user, never an argument.
  requireMay(room, viewer.login, 'DELETE_ROOM', 'delete it');
  let deletedAt: WriteTimestamp | undefined;
  let intent: RoomCleanup | undefined;
  for (let attempt = 0; attempt < Limits.room.deleteAttempts && !deletedAt; attempt++) {
    // Listed before each attempt, with the participants it conditions on: should this request be lost once the LWT
    // applied, the job finds the deletion and cleans up after it. (An attempt that throws leaves it listed: whether
    // that LWT applied is the job's to find out.)
    intent = await listIntent(ctx.services, room, roomLogins(room), intent);
    const outcome = await stores.rooms.deleteIfUnchanged(room);
    if (outcome.status === 'gone') {
      await dropIntent(ctx.services, intent);
      throw notFound('Room');
    }
    if (outcome.status === 'deleted') deletedAt = outcome.at;
    else room = outcome.room; // someone joined or left meanwhile: try again with the set as it is now
  }
  if (!deletedAt) {
    await dropIntent(ctx.services, intent!);
    throw conflict('The room kept changing while it was being deleted; try again');
  }
  // Listed at the deletion's time before anything else: should this request die before its cleanup is done, another
  // instance finishes it.
  const cleanup = await confirmIntent(ctx.services, intent!, deletedAt);
  const person = await viewerPerson(ctx);
  await ctx.services.rooms.sequencer.take(room).publish([{ kind: 'RoomDeleted', roomName: name, deletedBy: person }]);
  // Not atomic with the delete (as in the seed): for a moment a former participant may still list the room.
  // Meanwhile the name may be taken again: every cleanup write is stamped with the deletion's time, so it
  // erases the deleted room only, never what a new room of that name wrote since.
  await runCleanup(ctx.services, cleanup);
  return true;
}

/**
 * A lookup: a name no room can have finds nothing (as user(login) does), without asking Cassandra. Read through
 * the request's room loader, so nodes(ids:) reads its rooms in one batch.
 */
export async function roomByName(ctx: Context, rawName: string): Promise<RoomRecord | null> {
  requireViewer(ctx);
  const name = normalizeRoomName(rawName);
  if (!isPossibleRoomName(name)) return null;
  return visibleTo(ctx, await roomLoader(ctx).load(name));
}

/** node(id:)'s rooms, by name: as room(name:), a private room only for those inside it. */
export function roomNodes(ctx: Context, names: readonly string[]): Array<Promise<RoomRecord | null>> {
  return eachVisibleOrNull(names, (name) => roomByName(ctx, name));
}

/**
 * Every public room, a page at a time, in token order (private rooms are unlisted, even to their participants: the
 * viewer's own are User.chatRooms). Each edge's cursor is its room's name, so a client resumes from any edge with
 * one bounded read; a room deleted (or made private) meanwhile still marks its place in the order.
 */
export async function listRooms(
  ctx: Context,
  first: number | null | undefined,
  after: string | null | undefined,
): Promise<Connection<RoomRecord>> {
  requireViewer(ctx);
  const size = pageSize('first', first);
  const start = after ? decodeRoomsCursor('after', after) : null;
  const page = await ctx.services.stores.rooms.pageAfter(start, size, (room) => room.visibility !== 'PRIVATE');
  return connection(page.rows, (room) => encodeRoomsCursor(room.name), { hasNextPage: page.more });
}

/** The logged-in user's rooms (null for anyone else's profile). Rooms deleted meanwhile are left out. */
export async function chatRoomsOf(ctx: Context, user: UserRecord): Promise<RoomRecord[] | null> {
  const viewer = requireViewer(ctx);
  if (viewer.login !== user.login) return null;
  const fresh = await ctx.services.stores.users.byLogin(viewer.login);
  const rooms = (await ctx.services.stores.rooms.byNames([...(fresh?.chatRooms ?? [])])).filter((room) => visibleTo(ctx, room));
  return rooms.sort((a, b) => a.name.localeCompare(b.name));
}
