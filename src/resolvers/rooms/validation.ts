/** Input rules of the chat rooms domain; each names the field at fault. */
import { badInput } from '../../errors.js';
import { Limits } from '../../limits.js';
import { requireLength } from '../../validation.js';

const { room } = Limits;

/**
 * Room names are case-insensitive ("Games" and "games" are one room, as with
 * logins), so they are stored lowercase: nobody can open a look-alike room.
 */
export function validRoomName(field: string, name: string): string {
  const normalized = normalizeRoomName(name);
  requireLength(field, normalized, room.name.min, room.name.max);
  if (!room.name.pattern.test(normalized)) {
    throw badInput(field, `${field} must start with a letter or digit, then hold only letters, digits, '_', '.' and '-'`);
  }
  return normalized;
}

/** The stored form of a name a client typed. Hopeless sizes are left as they are (and refused by the checks). */
export function normalizeRoomName(name: string): string {
  return name.length > room.name.max * 4 ? name : name.trim().toLowerCase();
}

/**
 * Whether a string can be the name of a stored room. Anything else names no
 * room and must never reach Cassandra: an empty key or one over 64 KiB fails
 * there as a server error, not as "no such room".
 */
export function isPossibleRoomName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.length >= room.name.min &&
    name.length <= room.name.max &&
    room.name.pattern.test(name) &&
    name === name.toLowerCase()
  );
}

/** Banner: optional, trimmed, at most 280 characters; blank means none. */
export function validBanner(field: string, banner: string | null | undefined): string | null {
  if (banner == null) return null;
  const trimmed = banner.trim();
  if (trimmed === '') return null;
  return requireLength(field, trimmed, 0, room.banner.max);
}

export function validContent(field: string, content: string): string {
  return requireLength(field, content.trim(), room.content.min, room.content.max);
}
