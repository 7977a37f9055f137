/**
 * Moderation and flood control. The room's owner and admins give roles; the owner, admins and moderators remove,
 * ban and mute participants below their role and set slow mode (permissions.ts says who may do what). Every
 * participant's posts are also limited per user across instances. Each action is published on the room's feed.
 */
import { recordAudit, validReason } from './access/audit-log.js';
import type { Context } from '../context.js';
import type { MemberGrant, RoomHead, RoomRecord, RoomVisibility } from '../../db/rooms/rooms.js';
import { AppError, ErrorCode, badInput, conflict, notFound, RateLimitReason, rateLimited } from '../../errors.js';
import { Limits } from '../../limits.js';
import { pageSize, validLogin, validMetadata } from '../../validation.js';
import { connection, decodeCursor, encodeCursor, type Connection } from '../../pagination.js';
import { requireViewer } from '../shared/guards.js';
import { isParticipant, requireRoom, viewerPerson, visibleTo } from './access/access.js';
import { may, requireMay, requireMayActOn, requireMayGive, roleIn, type RoomAction, type RoomRole } from './access/permissions.js';
import type { NamedRole } from '../../db/rooms/moderation.js';
import { chatUser } from './model.js';
import { completeNotice, dropNotice, listNotice } from './room-notices.js';
import { validRoomName } from './validation.js';
import type { ChatUser } from '../../db/rooms/chat-user.js';

const { moderation: limits } = Limits.room;

export const bannedFrom = (room: string) => new AppError(ErrorCode.BANNED, `You are banned from the room "${room}"`);

/** The moderators who still take part (the stored list may name someone whose departure raced their naming). */
export const currentModerators = (room: RoomRecord) => room.moderators.filter((login) => isParticipant(room, login));

/** A muted participant may neither post nor edit until the mute ends (MUTED, with when). */
export function requireNotMuted(ctx: Context, room: RoomHead, login: string): void {
  const now = ctx.services.clock.now().getTime();
  const mutedUntil = room.mutedUntil.get(login);
  if (mutedUntil && mutedUntil.getTime() > now) {
    throw new AppError(ErrorCode.MUTED, `You are muted in "${room.name}" until ${mutedUntil.toISOString()}`, {
      mutedUntil: mutedUntil.toISOString(),
      retryAfter: Math.ceil((mutedUntil.getTime() - now) / 1000),
    });
  }
}

/**
 * Whether `login` may post in `room` now: not muted, within slow mode (which
 * moderators skip) and within the per-user limit. Counts this post.
 */
export async function requirePostAllowed(ctx: Context, room: RoomHead, participants: ChatUser[], login: string): Promise<void> {
  const { rateLimiter, config } = ctx.services;
  requireNotMuted(ctx, room, login);
  // Asked of the participants read: a post reads only its author's entries, and its author takes part.
  if (room.slowModeSeconds && !may({ ...room, participants }, login, 'SKIP_SLOW_MODE')) {
    const slot = await rateLimiter.increment(`slow:${room.name}:${login}`, room.slowModeSeconds);
    if (slot.count > 1) {
      throw rateLimited(RateLimitReason.SLOW_MODE, `Slow mode: one message per ${room.slowModeSeconds} s in "${room.name}"`, Math.max(1, slot.retryAfter));
    }
  }
  const { postsPerWindow, postWindowSeconds } = config.rooms;
  const window = await rateLimiter.increment(`posts:${login}`, postWindowSeconds);
  if (window.count > postsPerWindow) {
    throw rateLimited(RateLimitReason.POST_RATE, `At most ${postsPerWindow} messages per ${postWindowSeconds} s`, Math.max(1, window.retryAfter));
  }
}

/** The room, the acting user and the person acted on, once the actor may do `action` to them. */
async function moderate(ctx: Context, rawName: string, rawLogin: string, action: RoomAction, what: string) {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  const login = validLogin('login', rawLogin.trim().toLowerCase());
  requireMayActOn(room, viewer.login, login, action, what);
  return { room, login, by: await viewerPerson(ctx) };
}

/**
 * Why a moderation write did not apply, read again: the room is gone (NOT_FOUND), the actor may no longer do it
 * (FORBIDDEN: demoted meanwhile, and the write asked them to still moderate), or the room changed otherwise (CONFLICT).
 */
async function notApplied(ctx: Context, roomName: string, check: (room: RoomRecord) => void): Promise<never> {
  const room = await requireRoom(ctx, roomName);
  check(room);
  throw conflict(`The room "${roomName}" changed meanwhile; try again`);
}

const personIn = (room: RoomRecord, login: string): ChatUser =>
  room.participants.find((p) => p.login === login) ?? chatUser({ login, firstname: '', lastname: '' });

/** A role as it is stored: a named role's set, or none for a member. */
const NAMED: Record<Exclude<RoomRole, 'OWNER'>, NamedRole | 'member'> = { ADMIN: 'admin', MODERATOR: 'moderator', MEMBER: 'member', GUEST: 'guest' };

/**
 * Gives a participant a role below the actor's (CHANGE_ROLES): admins give moderator, member and guest to those
 * below them, the owner any role but their own. Answers the room as it is after; publishes ModeratorChanged when
 * the person became or stopped being a moderator.
 */
export async function setRoomRole(ctx: Context, name: string, rawLogin: string, role: RoomRole): Promise<RoomRecord> {
  const { room, login, by } = await moderate(ctx, name, rawLogin, 'CHANGE_ROLES', 'change roles');
  requireMayGive(room, by.login, role);
  if (!isParticipant(room, login)) throw badInput('login', 'Only participants are given a role');
  const before = roleIn(room, login);
  if (before === role) return room;
  const named = NAMED[role as Exclude<RoomRole, 'OWNER'>];
  if (!(await ctx.services.stores.moderation.setRole(room, login, named))) {
    await notApplied(ctx, room.name, (now) => {
      requireMayActOn(now, by.login, login, 'CHANGE_ROLES', 'change roles');
      requireMayGive(now, by.login, role);
    });
  }
  await recordAudit(ctx, room, { action: 'ROLE_CHANGED', target: login, details: `${before ?? 'NONE'} to ${role}` });
  if (before === 'MODERATOR' || role === 'MODERATOR') {
    const moderator = role === 'MODERATOR';
    await ctx.services.rooms.sequencer.take(room).publish([{ kind: 'ModeratorChanged', roomName: room.name, user: personIn(room, login), moderator, by }]);
  }
  const holding = (list: string[], held: boolean) => (held ? [...new Set([...list, login])] : list.filter((l) => l !== login));
  return { ...room, admins: holding(room.admins, role === 'ADMIN'), moderators: holding(room.moderators, role === 'MODERATOR'), guests: holding(room.guests, role === 'GUEST') };
}

/** Names a participant a moderator (setRoomRole MODERATOR), or a moderator a member again. */
export async function setModerator(ctx: Context, name: string, rawLogin: string, moderator: boolean): Promise<RoomRecord> {
  if (moderator) return setRoomRole(ctx, name, rawLogin, 'MODERATOR');
  const { room, login } = await moderate(ctx, name, rawLogin, 'CHANGE_ROLES', 'name moderators');
  return roleIn(room, login) === 'MODERATOR' ? setRoomRole(ctx, name, rawLogin, 'MEMBER') : room;
}

/**
 * Removes a participant (they may join again) or bans them (they may not, until unbanned). Answers the room as it
 * is after: unchanged when they were not a participant and no ban was asked.
 */
export async function removeParticipant(ctx: Context, name: string, rawLogin: string, ban: boolean, rawReason?: string | null): Promise<RoomRecord> {
  const reason = validReason(rawReason);
  const [action, what] = ban ? (['BAN', 'ban'] as const) : (['REMOVE', 'remove'] as const);
  let { room, login, by } = await moderate(ctx, name, rawLogin, action, what);
  const { stores, clock } = ctx.services;
  const person = personIn(room, login);
  const bannedAt = clock.now();
  // Before the write, like their list: no invitation they still hold lets them back in once they are out.
  await stores.invitations.drop(login, room.name);
  // Listed before the write: the message saying so is written whatever happens to this request after it.
  const listed = await listNotice(ctx.services, { roomName: room.name, login, kind: ban ? 'ban' : 'removal', byLogin: by.login });
  if (ban) {
    let outcome = 'changed';
    for (let attempt = 0; attempt < limits.banAttempts && outcome === 'changed'; attempt++) {
      const entries = room.participants.filter((p) => p.login === login);
      outcome = await stores.moderation.ban(room, login, entries, bannedAt);
      if (outcome === 'changed') {
        // Someone joined or left meanwhile, perhaps the acting moderator, or they were demoted, or a room of that
        // name was made again.
        try {
          room = await requireRoom(ctx, room.name);
          requireMayActOn(room, by.login, login, action, what);
        } catch (err) {
          // Refused now, or the room is gone: no attempt applied, and the listing goes too.
          await dropNotice(ctx.services, listed);
          throw err;
        }
      }
    }
    if (outcome !== 'banned') await dropNotice(ctx.services, listed);
    if (outcome === 'gone') throw notFound('Room');
    if (outcome === 'changed') throw conflict('The participants kept changing while banning; try again');
    await stores.rooms.removeFromUser(login, room.name);
  } else {
    const outcome = await removeJudged(ctx, room, login, by.login).catch(async (err: unknown) => {
      // Refused, or the room gone: no attempt applied, and the listing goes too. Anything else (storage that did not
      // answer) may have applied: the listing stays, for the room notices job to settle.
      if (err instanceof AppError && NOT_APPLIED.has(err.code)) await dropNotice(ctx.services, listed);
      throw err;
    });
    room = outcome.room;
    if (!outcome.removed) {
      await dropNotice(ctx.services, listed);
      return room;
    }
  }
  // The removal stands: its message follows, now or from the room notices job.
  await recordAudit(ctx, room, { action: ban ? 'BANNED' : 'REMOVED', target: login, reason });
  await completeNotice(ctx.services, room, person, listed, by).catch((err) =>
    ctx.services.logger.warn({ err, room: room.name }, 'removed; the message saying so is left to the room notices job'),
  );
  return {
    ...room,
    participants: room.participants.filter((p) => p.login !== login),
    moderators: room.moderators.filter((m) => m !== login),
    admins: room.admins.filter((m) => m !== login),
    guests: room.guests.filter((m) => m !== login),
    banned: ban ? new Map([...room.banned, [login, bannedAt]]) : room.banned,
  };
}

/** The codes of a removal refused or impossible: none of its attempts applied. */
const NOT_APPLIED: ReadonlySet<string> = new Set([ErrorCode.FORBIDDEN, ErrorCode.NOT_FOUND, ErrorCode.CONFLICT, ErrorCode.BAD_USER_INPUT]);

/**
 * A removal without a ban. It asks the room's authority to be as read, like a ban: after a demotion of the remover or
 * a transfer to the person removed, it does not apply, and is judged again on the room as it is then (FORBIDDEN, or
 * tried again). The room it was judged on last (the one it applied to), and whether this removal took them out (not:
 * they no longer took part).
 */
async function removeJudged(ctx: Context, read: RoomRecord, login: string, remover: string): Promise<{ room: RoomRecord; removed: boolean }> {
  const { stores } = ctx.services;
  let room = read;
  for (let attempt = 1; ; attempt++) {
    const entries = room.participants.filter((p) => p.login === login);
    if (entries.length === 0) return { room, removed: false };
    // Their list first: a removal cut short leaves no list naming a room they were removed from.
    await stores.rooms.removeFromUser(login, room.name);
    if (await stores.moderation.remove(room, login, entries)) return { room, removed: true };
    // Not removed. Read at SERIAL: their list names the room again if they still take part in this room, and only
    // then is the removal judged (whatever it answers, the list is right).
    const now = await stores.rooms.byNameSerial(room.name);
    const same = now !== undefined && now.createdAt.getTime() === room.createdAt.getTime();
    if (same && isParticipant(now, login)) await stores.rooms.addToUser(login, room.name);
    const visible = same ? visibleTo(ctx, now) : null;
    if (!visible) throw notFound('Room');
    room = visible;
    requireMayActOn(room, remover, login, 'REMOVE', 'remove');
    if (attempt >= limits.banAttempts) throw conflict('The room kept changing while removing; try again');
  }
}

/** Lifts a ban (none: nothing changes). Answers the room as it is after. */
export async function unban(ctx: Context, name: string, rawLogin: string): Promise<RoomRecord> {
  const { room, login, by } = await moderate(ctx, name, rawLogin, 'BAN', 'unban');
  if (!room.banned.has(login)) return room;
  if (!(await ctx.services.stores.moderation.unban(room, login))) {
    await notApplied(ctx, room.name, (now) => requireMayActOn(now, by.login, login, 'BAN', 'unban'));
  }
  await recordAudit(ctx, room, { action: 'UNBANNED', target: login });
  const banned = new Map(room.banned);
  banned.delete(login);
  return { ...room, banned };
}

/** Mutes a participant for `minutes` (0 lifts it): their posts are refused with MUTED until then. Answers the room as it is after. */
export async function muteParticipant(ctx: Context, name: string, rawLogin: string, minutes: number, rawReason?: string | null): Promise<RoomRecord> {
  const reason = validReason(rawReason);
  if (!Number.isInteger(minutes) || minutes < 0 || minutes > limits.maxMuteMinutes) {
    throw badInput('minutes', `minutes must be a whole number from 0 (unmute) to ${limits.maxMuteMinutes}`);
  }
  const { room, login, by } = await moderate(ctx, name, rawLogin, 'MUTE', 'mute');
  const { stores, clock, rooms } = ctx.services;
  const until = minutes > 0 ? new Date(clock.now().getTime() + minutes * 60_000) : null;
  if (!until && !((room.mutedUntil.get(login)?.getTime() ?? 0) > clock.now().getTime())) return room; // not muted: nothing to lift
  const done = until ? await stores.moderation.mute(room, login, until, minutes * 60) : await stores.moderation.unmute(room, login);
  if (!done) await notApplied(ctx, room.name, (now) => requireMayActOn(now, by.login, login, 'MUTE', 'mute'));
  await recordAudit(ctx, room, { action: 'MUTED', target: login, reason, details: until ? `until ${until.toISOString()}` : 'lifted' });
  await rooms.sequencer.take(room).publish([{ kind: 'ParticipantMuted', roomName: room.name, user: personIn(room, login), until: until?.toISOString() ?? null, by }]);
  const mutedUntil = new Map(room.mutedUntil);
  if (until) mutedUntil.set(login, until);
  else mutedUntil.delete(login);
  return { ...room, mutedUntil };
}

/** A person banned from a room, and since when. */
export interface RoomBan {
  login: string;
  bannedAt: Date;
}

/** A participant muted in a room, and until when. */
export interface RoomMute {
  login: string;
  mutedUntil: Date;
}

/** The room's bans, by login, for its moderators (null for anyone else). */
export function bannedParticipants(ctx: Context, room: RoomRecord, first: number | null | undefined, after: string | null | undefined): Connection<RoomBan> | null {
  if (!may(room, requireViewer(ctx).login, 'SEE_MODERATION')) return null;
  const bans = [...room.banned].map(([login, bannedAt]) => ({ login, bannedAt }));
  return pageByLogin(bans, first, after);
}

/** The room's mutes still running, by login, for its moderators (null for anyone else). */
export function mutedParticipants(ctx: Context, room: RoomRecord, first: number | null | undefined, after: string | null | undefined): Connection<RoomMute> | null {
  if (!may(room, requireViewer(ctx).login, 'SEE_MODERATION')) return null;
  const now = ctx.services.clock.now().getTime();
  const mutes = [...room.mutedUntil].filter(([, until]) => until.getTime() > now).map(([login, mutedUntil]) => ({ login, mutedUntil }));
  return pageByLogin(mutes, first, after);
}

/** The viewer's role in the room (roleIn). */
export const viewerRole = (ctx: Context, room: RoomRecord): RoomRole | null => roleIn(room, requireViewer(ctx).login);

/** Until when the viewer is muted in the room; null when they are not. */
export function viewerMutedUntil(ctx: Context, room: RoomHead): Date | null {
  const until = room.mutedUntil.get(requireViewer(ctx).login);
  return until && until.getTime() > ctx.services.clock.now().getTime() ? until : null;
}

/** A page of a room's moderation entries (all in the room's row) in login order; the cursor is the last login. */
function pageByLogin<T extends { login: string }>(entries: T[], first: number | null | undefined, after: string | null | undefined): Connection<T> {
  const size = pageSize('first', first);
  const from = after ? decodeCursor('after', after, (p): p is { l: string } => typeof p.l === 'string').l : null;
  const sorted = entries.sort((a, b) => (a.login < b.login ? -1 : a.login > b.login ? 1 : 0)).filter((e) => from === null || e.login > from);
  return connection(sorted.slice(0, size), (e) => encodeCursor({ l: e.login }), { hasNextPage: sorted.length > size });
}

/** Sets slow mode: one message per `seconds` per participant (0 turns it off). Moderators are exempt. */
export async function setSlowMode(ctx: Context, rawName: string, seconds: number): Promise<RoomRecord> {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > limits.maxSlowModeSeconds) {
    throw badInput('seconds', `seconds must be a whole number from 0 (off) to ${limits.maxSlowModeSeconds}`);
  }
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  requireMay(room, viewer.login, 'SLOW_MODE', 'set slow mode');
  const value = seconds > 0 ? seconds : null;
  if ((room.slowModeSeconds ?? null) === value) return room; // as it is already: nothing to write, publish or audit
  if (!(await ctx.services.stores.moderation.slowMode(room, value))) {
    await notApplied(ctx, room.name, (now) => requireMay(now, viewer.login, 'SLOW_MODE', 'set slow mode'));
  }
  await recordAudit(ctx, room, { action: 'SLOW_MODE_SET', details: value === null ? 'off' : `${value} s` });
  const by = await viewerPerson(ctx);
  await ctx.services.rooms.sequencer.take(room).publish([{ kind: 'SlowModeChanged', roomName: room.name, seconds: value, by }]);
  return { ...room, slowModeSeconds: value };
}

/** The room's custom data (a JSON object, or null to clear it), set by its admins or owner; published as RoomMetadataChanged. */
export async function setRoomMetadata(ctx: Context, rawName: string, rawMetadata: unknown): Promise<RoomRecord> {
  // Left out is not null: clearing the data is said with null.
  if (rawMetadata === undefined) throw badInput('metadata', 'Give metadata: a JSON object, or null to clear it');
  const metadata = validMetadata('metadata', rawMetadata);
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  requireMay(room, viewer.login, 'EDIT_ROOM_DATA', 'set its custom data');
  if (!(await ctx.services.stores.moderation.metadata(room, metadata))) {
    await notApplied(ctx, room.name, (now) => requireMay(now, viewer.login, 'EDIT_ROOM_DATA', 'set its custom data'));
  }
  await recordAudit(ctx, room, { action: 'ROOM_DATA_CHANGED', details: metadata === null ? 'cleared' : 'set' });
  const by = await viewerPerson(ctx);
  await ctx.services.rooms.sequencer.take(room).publish([{ kind: 'RoomMetadataChanged', roomName: room.name, metadata, by }]);
  return { ...room, metadata };
}

/**
 * Who may find and join the room, set by its admins or owner. Made private, it is unlisted and hidden from everyone outside
 * it (access.ts), and a join that read it public before does not apply (the join's LWT asks it to be public still).
 */
export async function setRoomVisibility(ctx: Context, rawName: string, visibility: RoomVisibility): Promise<RoomRecord> {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  requireMay(room, viewer.login, 'EDIT_ROOM_DATA', 'set who may find and join it');
  if (room.visibility === visibility) return room;
  if (!(await ctx.services.stores.moderation.visibility(room, visibility === 'PUBLIC' ? null : visibility))) {
    await notApplied(ctx, room.name, (now) => requireMay(now, viewer.login, 'EDIT_ROOM_DATA', 'set who may find and join it'));
  }
  await recordAudit(ctx, room, { action: 'VISIBILITY_CHANGED', details: `${room.visibility} to ${visibility}` });
  return { ...room, visibility };
}

/**
 * What the room lets its members do beyond the member role's actions (permissions.ts, requiredRole), set by its admins
 * or owner: the whole list, replacing the one before. Asked of the authority as read, as every moderation write is.
 */
export async function setRoomMemberPermissions(ctx: Context, rawName: string, grants: MemberGrant[]): Promise<RoomRecord> {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('roomName', rawName));
  const wanted = [...new Set(grants)].sort();
  requireMay(room, viewer.login, 'EDIT_ROOM_DATA', 'set what its members may do');
  if ([...room.memberGrants].sort().join() === wanted.join()) return room;
  if (!(await ctx.services.stores.moderation.memberGrants(room, wanted))) {
    await notApplied(ctx, room.name, (now) => requireMay(now, viewer.login, 'EDIT_ROOM_DATA', 'set what its members may do'));
  }
  await recordAudit(ctx, room, { action: 'MEMBER_PERMISSIONS_CHANGED', details: wanted.join(', ') || 'none' });
  return { ...room, memberGrants: wanted };
}

/** A room's custom data as a client reads it. */
export const roomMetadata = (room: Pick<RoomRecord, 'metadata'>): unknown => (room.metadata === null ? null : JSON.parse(room.metadata));
