/**
 * Requests to join a room on request (RoomVisibility ON_REQUEST: listed, and entered by a moderator's approval):
 * ask, withdraw, approve, decline, and the room's list of them.
 *
 * Rules:
 * - Anyone who sees the room and does not take part asks (requestToJoin); asking again changes nothing. A banned
 *   person is refused (BANNED), and so is a request into a room that is not on request (BAD_USER_INPUT: a public room
 *   is joined, a private one is entered by invitation).
 * - Moderators, admins and the owner (APPROVE, permissions.ts) see the requests and decide. An approval is an
 *   invitation (invitations.ts, in the approver's name, with its rules: nobody banned, the invitee's limit): the
 *   requester accepts it as any invitation, told live by RoomInvitationReceived. So a person enters a room on request
 *   only through the invitation's LWTs, and the participant cap and the bans hold as they do for invitations.
 * - Of an approval and a decline racing each other, exactly one applies: each claims the request by LWT
 *   (db/rooms/join-requests.ts). An approval whose invitation is refused for a cause that may pass (storage not
 *   answering, the invitee's limit) gives the request back; one refused for good (banned meanwhile, taking part
 *   already) drops it.
 * - A request is to the room of that name made when it was sent: a room deleted and made again drops it.
 */
import { recordAudit } from './audit-log.js';
import type { Context } from '../../context.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import { isRequest, type JoinRequestClaim, type JoinRequestRecord, type StaleRequestRow } from '../../../db/rooms/join-requests.js';
import { AppError, badInput, conflict, LimitName, limitReached, notFound } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { connection, decodeCursor, encodeCursor, type Connection } from '../../../pagination.js';
import { isPossibleLogin, pageSize, validLogin } from '../../../validation.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant, requireRoom } from './access.js';
import { may, requireMay } from './permissions.js';
import { bannedFrom } from '../moderation.js';
import { sendInvitation, type RoomInvitation } from './invitations.js';
import { validRoomName } from '../validation.js';

/** A request as the room's moderators and its requester see it: the room it asks to join, read with it. */
export interface RoomJoinRequest {
  request: JoinRequestRecord;
  room: RoomRecord;
}

/** Of this room, not an earlier one of its name (nor debris). */
const ofRoom = (row: JoinRequestRecord | StaleRequestRow, room: RoomRecord): row is JoinRequestRecord =>
  isRequest(row) && row.roomCreatedAt.getTime() === room.createdAt.getTime();

/** Whether the request still waits: to this room (not an earlier one of its name), pending, from an outsider not banned. */
const waits = (request: JoinRequestRecord | StaleRequestRow, room: RoomRecord): request is JoinRequestRecord =>
  ofRoom(request, room) &&
  request.status === 'PENDING' &&
  request.roomCreatedAt.getTime() === room.createdAt.getTime() &&
  !isParticipant(room, request.requesterLogin) &&
  !room.banned.has(request.requesterLogin);

const noRequest = () => notFound('JoinRequest');

export async function requestToJoin(ctx: Context, rawName: string): Promise<RoomJoinRequest> {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  if (room.banned.has(viewer.login)) throw bannedFrom(room.name);
  if (isParticipant(room, viewer.login)) throw badInput('roomName', 'You take part in the room already');
  if (room.visibility !== 'ON_REQUEST') throw badInput('roomName', 'This room does not take requests to join: anyone joins it with joinRoom');
  const { joinRequests } = ctx.services.stores;
  const found = await joinRequests.one(room.name, viewer.login);
  if (found && waits(found, room)) return { request: found, room };
  // A decision on it is being made (it ends with the row deleted): asking again now would undo it.
  if (found && ofRoom(found, room)) throw conflict('A moderator is deciding on your request to join; try again in a moment');
  const max = Limits.room.maxPendingJoinRequests;
  const waiting = (await joinRequests.upTo(room.name, max + 1)).filter((row) => waits(row, room)).length;
  if (waiting >= max) {
    throw limitReached(LimitName.PENDING_JOIN_REQUESTS, max, `The room "${room.name}" has ${max} requests to join waiting for a decision`);
  }
  // A row left by an earlier room of the name, or debris, goes first: as read, or the request is tried again.
  if (found && !(await joinRequests.dropStale(room.name, viewer.login, found))) throw conflict('Your request to join changed meanwhile; try again');
  const request = await joinRequests.request({ roomName: room.name, requesterLogin: viewer.login, roomCreatedAt: room.createdAt, requestedAt: ctx.services.clock.now() });
  return { request, room };
}

/** The viewer takes back their request to join the room; false when none was waiting. */
export async function withdrawJoinRequest(ctx: Context, rawName: string): Promise<boolean> {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  // Claimed as a decision is, with a token of its own: a read after an unknown outcome tells this withdrawal from an
  // approval or a decline that took the request first.
  const claim = await ctx.services.stores.joinRequests.claim(room.name, viewer.login, room.createdAt, 'WITHDRAWN');
  if (!claim) return false;
  await settled(ctx, room.name, viewer.login, claim);
  return true;
}

/** The request of `login`, claimed for the viewer's decision; NOT_FOUND when none waits (or another decision came first). */
async function claimed(ctx: Context, rawName: string, rawLogin: string, status: 'APPROVING' | 'DECLINED', what: string) {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  requireMay(room, viewer.login, 'APPROVE', what);
  const login = validLogin('login', rawLogin.trim().toLowerCase());
  const { joinRequests } = ctx.services.stores;
  const found = await joinRequests.one(room.name, login);
  if (!found || !waits(found, room)) throw noRequest();
  const claim = await joinRequests.claim(room.name, login, room.createdAt, status);
  if (!claim) throw noRequest();
  return { room, login, claim };
}

/**
 * Deletes a request its decision settled. The decision stands whatever this does: should the delete fail, the claimed
 * row waits for nobody (no decision can claim it again) and lives out its TTL.
 */
async function settled(ctx: Context, roomName: string, login: string, claim: JoinRequestClaim): Promise<void> {
  await ctx.services.stores.joinRequests
    .dropDecided(roomName, login, claim)
    .catch((err: unknown) => ctx.services.logger.warn({ err, roomName, login }, 'a decided request to join was not deleted; it expires'));
}

/** Approves `login`'s request: they are invited (and told live), and accept the invitation to join. */
export async function approveJoinRequest(ctx: Context, rawName: string, rawLogin: string): Promise<RoomInvitation> {
  const { room, login, claim } = await claimed(ctx, rawName, rawLogin, 'APPROVING', 'approve requests to join');
  const { joinRequests } = ctx.services.stores;
  let invited: RoomInvitation;
  try {
    invited = await sendInvitation(ctx, room, login);
  } catch (err) {
    // Refused for good (banned, taking part, no such user): the request goes. Anything else may pass: it waits again.
    const never = err instanceof AppError && ['FORBIDDEN', 'BAD_USER_INPUT', 'NOT_FOUND'].includes(err.code);
    await (never ? joinRequests.dropDecided(room.name, login, claim) : joinRequests.giveBack(room.name, login, claim));
    throw err;
  }
  await settled(ctx, room.name, login, claim);
  await recordAudit(ctx, room, { action: 'JOIN_REQUEST_APPROVED', target: login });
  return invited;
}

/** Declines `login`'s request: it goes, and they may ask again. */
export async function declineJoinRequest(ctx: Context, rawName: string, rawLogin: string): Promise<boolean> {
  const { room, login, claim } = await claimed(ctx, rawName, rawLogin, 'DECLINED', 'decline requests to join');
  await settled(ctx, room.name, login, claim);
  await recordAudit(ctx, room, { action: 'JOIN_REQUEST_DECLINED', target: login });
  return true;
}

/** The room's requests waiting for a decision, by login, for those who decide (null for anyone else). A page may hold fewer than asked. */
export async function joinRequestsOf(ctx: Context, room: RoomRecord, first: number | null | undefined, after: string | null | undefined): Promise<Connection<RoomJoinRequest> | null> {
  if (!may(room, requireViewer(ctx).login, 'APPROVE')) return null;
  const size = pageSize('first', first);
  const from = after ? decodeCursor('after', after, (p): p is { l: string } => typeof p.l === 'string' && isPossibleLogin(p.l)).l : '';
  const rows = await ctx.services.stores.joinRequests.page(room.name, from, size + 1);
  const page = rows.slice(0, size);
  const last = page.at(-1)?.requesterLogin;
  const shown = page.filter((request) => waits(request, room)).map((request) => ({ request: request as JoinRequestRecord, room }));
  // The cursor of each edge is its login; the page's end is the last row read, shown or not.
  const result = connection(shown, (r) => encodeCursor({ l: r.request.requesterLogin }), { hasNextPage: rows.length > size });
  return last === undefined ? result : { ...result, pageInfo: { ...result.pageInfo, endCursor: encodeCursor({ l: last }) } };
}

/** The viewer's own request to join the room, while it waits; null otherwise. */
export async function viewerJoinRequest(ctx: Context, room: RoomRecord): Promise<RoomJoinRequest | null> {
  const viewer = requireViewer(ctx);
  if (room.visibility !== 'ON_REQUEST' || isParticipant(room, viewer.login)) return null;
  const found = await ctx.services.stores.joinRequests.shown(room.name, viewer.login);
  return found && waits(found, room) ? { request: found, room } : null;
}
