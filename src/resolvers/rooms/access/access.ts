/**
 * Who takes part in a room, and the checks every room use case starts with.
 * Below both rooms.ts and messages.ts, which each need them, so neither
 * imports the other for them.
 */
import type { Context } from '../../context.js';
import { chatUser } from '../model.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import { forbidden, notFound, unauthenticated } from '../../../errors.js';
import { requireViewer } from '../../shared/guards.js';
import type { ChatUser } from '../../../db/rooms/chat-user.js';
import { userLoader } from '../../accounts/reads.js';

/** Whether `login` takes part, by the room's participants (or those of them read: see posting.ts). */
export const isParticipant = (room: Pick<RoomRecord, 'participants'>, login: string) => room.participants.some((p) => p.login === login);

/** The logged-in user as stored in rooms and messages. */
export async function viewerPerson(ctx: Context): Promise<ChatUser> {
  const viewer = requireViewer(ctx);
  const user = await userLoader(ctx).load(viewer.login);
  if (!user) throw unauthenticated();
  return chatUser(user);
}

/**
 * Whether `login` may know the room exists: anyone, for a public room or one on request; for a private one, its participants and its
 * owner (taking part or not). To anyone else a private room answers on every path exactly as a room that does not
 * exist: the one exception is createRoom under its name (room names are global).
 */
export const seesRoom = (room: Pick<RoomRecord, 'visibility' | 'ownerLogin' | 'participants'>, login: string | undefined): boolean =>
  room.visibility !== 'PRIVATE' || (login !== undefined && (room.ownerLogin === login || isParticipant(room, login)));

/** The room as the viewer may know it: null when there is none, or when it is hidden from them (seesRoom). */
export const visibleTo = <R extends RoomRecord>(ctx: Context, room: R | null | undefined): R | null =>
  room && seesRoom(room, ctx.viewer?.login) ? room : null;

/** The room, or NOT_FOUND (for a room hidden from the viewer too). */
export async function requireRoom(ctx: Context, name: string): Promise<RoomRecord> {
  const room = visibleTo(ctx, await ctx.services.stores.rooms.byName(name));
  if (!room) throw notFound('Room');
  return room;
}

/** The room, when the logged-in user takes part in it; NOT_FOUND or FORBIDDEN otherwise. */
export async function requireParticipation(ctx: Context, name: string): Promise<RoomRecord> {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, name);
  if (!isParticipant(room, viewer.login)) throw forbidden('Only participants of the room may do this');
  return room;
}
