/**
 * Invitations into a room, the way into a private one (a public one too): invite, accept, decline, revoke, and the
 * invitee's list.
 *
 * Rules:
 * - Moderators, admins and the owner invite (INVITE, permissions.ts); the inviter must see the room (access.ts), so to an
 *   outsider inviting into a private room it does not exist.
 * - Nobody invites a participant (BAD_USER_INPUT) or someone banned (FORBIDDEN: unbanning is a moderator's act of
 *   its own), nor anyone with Limits.room.maxPendingInvitations waiting (LIMIT_REACHED).
 * - The invitee may see the room an invitation names, whatever its visibility: its list shows it.
 * - An invitation is to the room of that name made when it was sent: a room deleted and made again under the name
 *   drops it.
 * - Of an accept and a revoke (or a decline) racing each other, exactly one applies: src/db/rooms/invitations.ts
 *   settles each by an LWT on the invitation's status. An accept claims the invitation, then joins; a join refused
 *   for a cause that may pass (the room full, storage not answering) gives the claim back. An accept retried after
 *   a lost request finds its own claim and finishes the join, or, the join done, answers the room.
 */
import { recordAudit } from './audit-log.js';
import type { Context } from '../../context.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { InvitationRecord } from '../../../db/rooms/invitations.js';
import { AppError, badInput, conflict, forbidden, LimitName, limitReached, notFound } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { validLogin } from '../../../validation.js';
import { requireViewer } from '../../shared/guards.js';
import { userLoader } from '../../accounts/reads.js';
import { isParticipant, requireRoom } from './access.js';
import { requireMay } from './permissions.js';
import { enterRoom } from '../rooms.js';
import { validRoomName } from '../validation.js';
import { publishInboxEvent } from '../../messenger/events.js';

/** An invitation as its invitee and the room's moderators see it: the room it names, read with it. */
export interface RoomInvitation {
  invitation: InvitationRecord;
  room: RoomRecord;
}

/** Whether the invitation names this room, not an earlier one of the same name. */
const isFor = (invitation: InvitationRecord, room: RoomRecord | undefined): room is RoomRecord =>
  room !== undefined && invitation.roomCreatedAt.getTime() === room.createdAt.getTime();

/** Whether a pending invitation still waits for its invitee: its room is there, and they neither take part nor are banned. */
const waitsFor = (invitation: InvitationRecord, room: RoomRecord | undefined, login: string): room is RoomRecord =>
  // Not once they take part, nor once banned: a ban shows nothing more of the room.
  isFor(invitation, room) && !isParticipant(room, login) && !room.banned.has(login);

export async function inviteToRoom(ctx: Context, rawName: string, rawLogin: string): Promise<RoomInvitation> {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  requireMay(room, viewer.login, 'INVITE', 'invite people');
  const login = validLogin('login', rawLogin.trim().toLowerCase());
  return sendInvitation(ctx, room, login);
}

/**
 * Invites `login` into the room in the viewer's name, once the viewer was found to be allowed to (by INVITE, or by
 * approving the person's request to join: join-requests.ts).
 */
export async function sendInvitation(ctx: Context, room: RoomRecord, login: string): Promise<RoomInvitation> {
  const viewer = requireViewer(ctx);
  if (!(await userLoader(ctx).load(login))) throw notFound('User');
  if (isParticipant(room, login)) throw badInput('login', `${login} takes part in the room already`);
  if (room.banned.has(login)) throw forbidden(`${login} is banned from the room: a moderator unbans them before they can be invited`);
  const { invitations } = ctx.services.stores;
  const waiting = await invitations.of(login, Limits.room.maxPendingInvitations + 1);
  const max = Limits.room.maxPendingInvitations;
  if (!waiting.some((i) => i.roomName === room.name) && waiting.length >= max) {
    throw limitReached(LimitName.PENDING_INVITATIONS, max, `${login} has ${max} invitations waiting for an answer`);
  }
  const sentAt = ctx.services.clock.now();
  const invitation = await invitations.invite({ inviteeLogin: login, roomName: room.name, roomCreatedAt: room.createdAt, inviterLogin: viewer.login, createdAt: sentAt });
  // Told live once, when it is new (inviting again changes nothing, and says nothing).
  if (invitation.createdAt.getTime() === sentAt.getTime()) {
    await recordAudit(ctx, room, { action: 'INVITED', target: login });
    await publishInboxEvent(ctx, { type: 'RoomInvitationReceived', owner: login, roomName: room.name, invitedAt: sentAt });
  }
  return { invitation, room };
}

/**
 * The invitation a RoomInvitationReceived event tells of, as it is on delivery: null once it no longer waits for the
 * viewer (accepted, declined, revoked, sent again, its room gone, or the viewer banned), so an event delivered late
 * shows nothing of a room the viewer may no longer see.
 */
export async function invitationReceived(ctx: Context, roomName: string, invitedAt: Date): Promise<RoomInvitation | null> {
  const viewer = requireViewer(ctx);
  const { invitations, rooms } = ctx.services.stores;
  const invitation = await invitations.one(viewer.login, roomName);
  if (invitation?.status !== 'PENDING' || invitation.createdAt.getTime() !== invitedAt.getTime()) return null;
  const room = await rooms.byName(roomName);
  return waitsFor(invitation, room, viewer.login) ? { invitation, room } : null;
}

/** The viewer's invitations waiting for an answer, newest first, each with its room (of any visibility). */
export async function roomInvitationsOf(ctx: Context): Promise<RoomInvitation[]> {
  const viewer = requireViewer(ctx);
  const { invitations, rooms } = ctx.services.stores;
  const pending = (await invitations.of(viewer.login, Limits.room.maxPendingInvitations)).filter((i) => i.status === 'PENDING');
  const byName = new Map((await rooms.byNames(pending.map((i) => i.roomName))).map((room) => [room.name, room]));
  return pending
    .flatMap((invitation) => {
      const room = byName.get(invitation.roomName);
      return waitsFor(invitation, room, viewer.login) ? [{ invitation, room }] : [];
    })
    .sort((a, b) => b.invitation.createdAt.getTime() - a.invitation.createdAt.getTime());
}

const noInvitation = () => notFound('Invitation');

/** Joins the room the viewer's invitation names; NOT_FOUND when there is none (revoked, declined, or never sent). */
export async function acceptInvitation(ctx: Context, rawName: string): Promise<RoomRecord> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  const { invitations, rooms } = ctx.services.stores;
  const found = await invitations.one(viewer.login, name);
  const room = await rooms.byName(name);
  // Accepted already (a retry whose first answer was lost): the room it joined.
  if (!found && room && isParticipant(room, viewer.login)) return room;
  if (!found) throw noInvitation();
  if (!isFor(found, room)) {
    await invitations.deleteIf(viewer.login, name, found.status); // to a room gone since: it can never be accepted
    throw noInvitation();
  }
  if (!(await invitations.claim(viewer.login, name, found.roomCreatedAt))) throw noInvitation();
  let joined: RoomRecord;
  try {
    joined = isParticipant(room, viewer.login) ? room : await enterRoom(ctx, room, 'invited');
  } catch (err) {
    // Banned, or the room gone: it never can be accepted. Anything else (a full room, storage that did not answer)
    // may pass: the invitation stays, to be accepted again.
    const never = err instanceof AppError && (err.code === 'BANNED' || err.code === 'NOT_FOUND');
    if (never) await invitations.deleteIf(viewer.login, name, 'ACCEPTED');
    else await invitations.unclaim(viewer.login, name);
    throw err;
  }
  // The join applied: the answer is the room. An invitation left ACCEPTED is dropped when they leave or are removed.
  await invitations.deleteIf(viewer.login, name, 'ACCEPTED').catch((err: unknown) =>
    ctx.services.logger.warn({ err, room: name }, 'joined by an invitation, which stays accepted until they leave'),
  );
  return joined;
}

/** Drops the viewer's pending invitation; false when there is none. */
export async function declineInvitation(ctx: Context, rawName: string): Promise<boolean> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', rawName);
  return (await ctx.services.stores.invitations.deleteIf(viewer.login, name, 'PENDING')).deleted;
}

/**
 * Drops `login`'s pending invitation to the room: its inviter's own, or anyone's by INVITE. CONFLICT when it was
 * accepted first (being accepted, or accepted and gone: they take part); NOT_FOUND when there is none.
 */
export async function revokeInvitation(ctx: Context, rawName: string, rawLogin: string): Promise<boolean> {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  const login = validLogin('login', rawLogin.trim().toLowerCase());
  const { invitations, rooms } = ctx.services.stores;
  const acceptedFirst = () => conflict(`${login} accepted the invitation first`);
  const none = async () => {
    const now = await rooms.byNameSerial(room.name);
    return now && isParticipant(now, login) ? acceptedFirst() : noInvitation();
  };
  const found = await invitations.one(login, room.name);
  const own = found !== undefined && isFor(found, room) && found.inviterLogin === viewer.login;
  // Asked before anything about the invitation is told: who is invited or takes part is for INVITE to know.
  if (!own) requireMay(room, viewer.login, 'INVITE', "revoke someone else's invitation");
  if (!found || !isFor(found, room)) throw await none();
  const outcome = await invitations.deleteIf(login, room.name, 'PENDING');
  if (outcome.deleted) {
    await recordAudit(ctx, room, { action: 'INVITATION_REVOKED', target: login });
    return true;
  }
  if (outcome.found?.status === 'ACCEPTED') throw acceptedFirst();
  throw await none();
}
