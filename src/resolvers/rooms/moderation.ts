/**
 * Moderation and flood control. The room's creator names moderators; the
 * creator and moderators remove, ban and mute participants and set slow mode.
 * Every participant's posts are also limited per user across instances. Each
 * action is published on the room's feed.
 */
import type { Context } from '../../context.js';
import type { RoomHead, RoomRecord } from '../../db/rooms/rooms.js';
import { AppError, ErrorCode, badInput, conflict, forbidden, notFound } from '../../errors.js';
import { Limits } from '../../limits.js';
import { validLogin } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';
import { isParticipant, requireRoom, viewerPerson } from './access.js';
import { chatUser, type ChatUser } from './model.js';
import { postSystemMessage } from './system-messages.js';
import { validRoomName } from './validation.js';

const { moderation: limits } = Limits.room;

export const bannedFrom = (room: string) => new AppError(ErrorCode.BANNED, `You are banned from the room "${room}"`);

export const isModerator = (room: RoomHead, login: string) => room.creatorLogin === login || room.moderators.includes(login);

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
export async function requirePostAllowed(ctx: Context, room: RoomHead, login: string): Promise<void> {
  const { rateLimiter, config } = ctx.services;
  requireNotMuted(ctx, room, login);
  if (room.slowModeSeconds && !isModerator(room, login)) {
    const slot = await rateLimiter.increment(`slow:${room.name}:${login}`, room.slowModeSeconds);
    if (slot.count > 1) {
      throw new AppError(ErrorCode.RATE_LIMITED, `Slow mode: one message per ${room.slowModeSeconds} s in "${room.name}"`, {
        retryAfter: Math.max(1, slot.retryAfter),
      });
    }
  }
  const { postsPerWindow, postWindowSeconds } = config.rooms;
  const window = await rateLimiter.increment(`posts:${login}`, postWindowSeconds);
  if (window.count > postsPerWindow) {
    throw new AppError(ErrorCode.RATE_LIMITED, `At most ${postsPerWindow} messages per ${postWindowSeconds} s`, {
      retryAfter: Math.max(1, window.retryAfter),
    });
  }
}

/** The room, the acting moderator and the participant acted on (who must not be the creator). */
async function moderate(ctx: Context, rawName: string, rawLogin: string, { creatorOnly = false } = {}) {
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('name', rawName));
  const login = validLogin('login', rawLogin.trim().toLowerCase());
  if (creatorOnly ? room.creatorLogin !== viewer.login : !isModerator(room, viewer.login)) {
    throw forbidden(creatorOnly ? "Only the room's creator may do this" : "Only the room's creator and moderators may do this");
  }
  if (login === room.creatorLogin) throw badInput('login', "The room's creator cannot be moderated");
  if (!creatorOnly && room.moderators.includes(login) && room.creatorLogin !== viewer.login) {
    throw forbidden('Only the creator moderates a moderator');
  }
  return { room, login, by: await viewerPerson(ctx) };
}

const personIn = (room: RoomRecord, login: string): ChatUser =>
  room.participants.find((p) => p.login === login) ?? chatUser({ login, firstname: '', lastname: '' });

/** Names (or un-names) a participant a moderator. Creator only. */
export async function setModerator(ctx: Context, name: string, rawLogin: string, moderator: boolean): Promise<RoomRecord> {
  const { room, login, by } = await moderate(ctx, name, rawLogin, { creatorOnly: true });
  if (moderator && !isParticipant(room, login)) throw badInput('login', 'Only participants can moderate');
  if (!(await ctx.services.stores.moderation.setModerator(room, login, moderator))) throw notFound('Room');
  await ctx.services.rooms.sequencer.take(room.name).publish([{ kind: 'ModeratorChanged', roomName: room.name, user: personIn(room, login), moderator, by }]);
  const moderators = moderator ? [...new Set([...room.moderators, login])] : room.moderators.filter((m) => m !== login);
  return { ...room, moderators };
}

/** Removes a participant (they may join again) or bans them (they may not, until unbanned). */
export async function removeParticipant(ctx: Context, name: string, rawLogin: string, ban: boolean): Promise<boolean> {
  let { room, login, by } = await moderate(ctx, name, rawLogin);
  const { stores, clock } = ctx.services;
  const person = personIn(room, login);
  if (ban) {
    let outcome = 'changed';
    for (let attempt = 0; attempt < limits.banAttempts && outcome === 'changed'; attempt++) {
      const entries = room.participants.filter((p) => p.login === login);
      outcome = await stores.moderation.ban(room, login, entries, clock.now());
      if (outcome === 'changed') room = await requireRoom(ctx, room.name);
    }
    if (outcome === 'gone') throw notFound('Room');
    if (outcome === 'changed') throw conflict('The participants kept changing while banning; try again');
    await stores.rooms.removeFromUser(login, room.name);
  } else {
    const entries = room.participants.filter((p) => p.login === login);
    if (entries.length === 0) return false;
    await stores.rooms.leave(room.name, login, entries);
  }
  const text = `${person.firstname} ${person.lastname} was ${ban ? 'banned from' : 'removed from'} the room`;
  await postSystemMessage(ctx, room, person, text, { kind: 'ParticipantRemoved', roomName: room.name, user: person, by, banned: ban });
  return true;
}

export async function unban(ctx: Context, name: string, rawLogin: string): Promise<boolean> {
  const { room, login } = await moderate(ctx, name, rawLogin);
  if (!room.banned.includes(login)) return false;
  if (!(await ctx.services.stores.moderation.unban(room, login))) throw notFound('Room');
  return true;
}

/** Mutes a participant for `minutes` (0 lifts it): their posts are refused with MUTED until then. */
export async function muteParticipant(ctx: Context, name: string, rawLogin: string, minutes: number): Promise<boolean> {
  if (!Number.isInteger(minutes) || minutes < 0 || minutes > limits.maxMuteMinutes) {
    throw badInput('minutes', `minutes must be a whole number from 0 (unmute) to ${limits.maxMuteMinutes}`);
  }
  const { room, login, by } = await moderate(ctx, name, rawLogin);
  const { stores, clock, rooms } = ctx.services;
  const until = minutes > 0 ? new Date(clock.now().getTime() + minutes * 60_000) : null;
  const done = until ? await stores.moderation.mute(room, login, until, minutes * 60) : await stores.moderation.unmute(room, login);
  if (!done) throw notFound('Room');
  await rooms.sequencer.take(room.name).publish([{ kind: 'ParticipantMuted', roomName: room.name, user: personIn(room, login), until: until?.toISOString() ?? null, by }]);
  return true;
}

/** Sets slow mode: one message per `seconds` per participant (0 turns it off). Moderators are exempt. */
export async function setSlowMode(ctx: Context, rawName: string, seconds: number): Promise<RoomRecord> {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > limits.maxSlowModeSeconds) {
    throw badInput('seconds', `seconds must be a whole number from 0 (off) to ${limits.maxSlowModeSeconds}`);
  }
  const viewer = requireViewer(ctx);
  const room = await requireRoom(ctx, validRoomName('name', rawName));
  if (!isModerator(room, viewer.login)) throw forbidden("Only the room's creator and moderators may do this");
  const value = seconds > 0 ? seconds : null;
  if (!(await ctx.services.stores.moderation.slowMode(room, value))) throw notFound('Room');
  const by = await viewerPerson(ctx);
  await ctx.services.rooms.sequencer.take(room.name).publish([{ kind: 'SlowModeChanged', roomName: room.name, seconds: value, by }]);
  return { ...room, slowModeSeconds: value };
}
