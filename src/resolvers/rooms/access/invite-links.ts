/**
 * Invite links: a token that lets whoever holds it into a room, public or private, until it expires or its uses
 * run out.
 *
 * Rules:
 * - Moderators, admins and the owner make and revoke links (INVITE, permissions.ts). The token is shown once, to its maker.
 * - A use is counted exactly, by an LWT (src/db/rooms/invite-links.ts): racing redeemers never take more uses than
 *   the link has, and a redeemer's retry (within Limits.room.inviteLink.retryMinutes) finds its own use instead of
 *   taking another. Someone who used it longer ago, and has left or was removed since, takes a new use.
 * - A use is taken only by someone who may then enter: not a participant (they are answered the room, no use
 *   taken), not banned (BANNED), and not into a full room (LIMIT_REACHED). A join refused after the use was taken
 *   (banned or filled meanwhile) keeps the use: it was counted.
 * - A link is to the room of that name made when it was made: a room deleted and made again under the name does
 *   not honour it. An unknown, expired, revoked or malformed token is NOT_FOUND, alike.
 */
import { recordAudit } from './audit-log.js';
import { createHash, randomBytes } from 'node:crypto';
import type { Context } from '../../context.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { InviteLinkRecord } from '../../../db/rooms/invite-links.js';
import { badInput, conflict, LimitName, limitReached, notFound } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant, requireRoom } from './access.js';
import { requireMay } from './permissions.js';
import { bannedFrom } from '../moderation.js';
import { enterRoom, roomFull } from '../rooms.js';
import { validRoomName } from '../validation.js';

const { inviteLink: limits } = Limits.room;
/** 128 random bits, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{22}$/;

export interface InviteLink {
  link: InviteLinkRecord;
  room: RoomRecord;
}

export async function createInviteLink(ctx: Context, rawName: string, maxUses: number, expiresInMinutes: number | null | undefined): Promise<InviteLink> {
  if (!Number.isInteger(maxUses) || maxUses < 1 || maxUses > limits.maxUses) {
    throw badInput('maxUses', `maxUses must be a whole number from 1 to ${limits.maxUses}`);
  }
  const minutes = expiresInMinutes ?? limits.defaultMinutes;
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > limits.maxMinutes) {
    throw badInput('expiresInMinutes', `expiresInMinutes must be a whole number from 1 to ${limits.maxMinutes}`);
  }
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  requireMay(room, viewer.login, 'INVITE', 'make invite links');
  const now = ctx.services.clock.now();
  const link: InviteLinkRecord = {
    token: randomBytes(16).toString('base64url'),
    roomName: room.name,
    roomCreatedAt: room.createdAt,
    createdBy: viewer.login,
    createdAt: now,
    expiresAt: new Date(now.getTime() + minutes * 60_000),
    maxUses,
    usedBy: new Map(),
  };
  await ctx.services.stores.inviteLinks.create(link);
  // Never the token: whoever reads the log must not be able to use it.
  await recordAudit(ctx, room, { action: 'INVITE_LINK_CREATED', details: `link ${linkTag(link.token)}: ${maxUses} uses, until ${link.expiresAt.toISOString()}` });
  return { link, room };
}

const noLink = () => notFound('Invite link');

/** What names a link in the audit log: the start of its token's SHA-256, which tells links apart and lets no one in. */
const linkTag = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 12);

/** Enters the room the link lets into, taking one of its uses; answers the room. */
export async function redeemInviteLink(ctx: Context, token: string): Promise<RoomRecord> {
  const viewer = requireViewer(ctx);
  if (!TOKEN.test(token)) throw noLink();
  const { inviteLinks, rooms } = ctx.services.stores;
  const now = ctx.services.clock.now();
  const link = await inviteLinks.byToken(token);
  if (!link || link.expiresAt <= now) throw noLink();
  const room = await rooms.byName(link.roomName);
  if (!room || room.createdAt.getTime() !== link.roomCreatedAt.getTime()) throw noLink();
  if (isParticipant(room, viewer.login)) return room;
  if (room.banned.has(viewer.login)) throw bannedFrom(room.name);
  if (room.participants.length >= Limits.room.maxParticipants) throw roomFull(room.name);
  const used = await inviteLinks.use(token, viewer.login, now, limits.retryMinutes * 60_000);
  if (used.status === 'gone') throw noLink();
  if (used.status === 'contended') throw conflict('Many people used this invite link at once; nothing was taken, try again');
  if (used.status === 'usedUp') throw limitReached(LimitName.INVITE_LINK_USES, link.maxUses, `This invite link was used ${link.maxUses} times, all it allows`);
  return enterRoom(ctx, room, 'invited');
}

/** Revokes a link to the room; false when there was none. */
export async function revokeInviteLink(ctx: Context, rawName: string, token: string): Promise<boolean> {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  requireMay(room, viewer.login, 'INVITE', 'revoke invite links');
  if (!TOKEN.test(token)) return false;
  const revoked = await ctx.services.stores.inviteLinks.delete(token, room.name);
  if (revoked) await recordAudit(ctx, room, { action: 'INVITE_LINK_REVOKED', details: `link ${linkTag(token)}` });
  return revoked;
}

/** How many uses a link has had. */
export const inviteLinkUses = (link: InviteLinkRecord) => link.usedBy.size;
