/**
 * Who may do what in a room: the rooms' use cases ask here, of the room as read, whether a role allows an action.
 * (POST and REACT are asked on their paths as isParticipant of access.ts: they need the person to take part, so an
 * owner who left moderates the room but does not post in it.)
 *
 * Rules:
 * - A person's role in a room follows from its row: its owner (its creator, until the ownership is handed on by
 *   transferRoomOwnership or by the owner leaving: heirOf) is its OWNER, taking part or not; a participant the owner
 *   named is a MODERATOR (while they take part: every way out of the room ends it); any other participant is a
 *   MEMBER; anyone else has no role (an outsider, a former member, someone banned).
 * - The owner's writes ask them to still own the room (owner_login as read), so an owner's action racing the
 *   transfer of the ownership applies before it or not at all.
 * - Each action needs a role at least (REQUIRED_ROLE, the matrix docs/api.md shows; test/rooms/permissions.test.ts
 *   holds the two to each other). Roles rank OWNER > MODERATOR > MEMBER.
 * - An action on a person (remove, ban, unban, mute) also needs the actor to outrank them: a moderator acts on
 *   members, the owner on anyone, and nobody on the owner.
 * - A refusal is FORBIDDEN, saying which role the action needs.
 * - A moderator's write asks them to still be one (actingModerator): once demoted, their racing action does not apply.
 */
import type { RoomHead, RoomRecord } from '../../db/rooms/rooms.js';
import { badInput, forbidden } from '../../errors.js';
import { isParticipant } from './access.js';

export const ROOM_ROLES = ['OWNER', 'MODERATOR', 'MEMBER'] as const;
export type RoomRole = (typeof ROOM_ROLES)[number];

const RANK: Record<RoomRole, number> = { OWNER: 3, MODERATOR: 2, MEMBER: 1 };

/** What the matrix governs, by the operation that does it. */
export const REQUIRED_ROLE = {
  /** postMessage (a reply too), forwardMessage into the room, votePoll, editMessage (of one's own). */
  POST: 'MEMBER',
  /** addReaction, removeReaction. */
  REACT: 'MEMBER',
  /** Post while slow mode is on, without waiting. */
  SKIP_SLOW_MODE: 'MODERATOR',
  /** removeParticipant (ban false). */
  REMOVE: 'MODERATOR',
  /** removeParticipant (ban true), unbanFromRoom. */
  BAN: 'MODERATOR',
  /** muteParticipant. */
  MUTE: 'MODERATOR',
  /** setSlowMode. */
  SLOW_MODE: 'MODERATOR',
  /** inviteToRoom, revokeInvitation of anyone's invitation (its inviter revokes their own), createInviteLink, revokeInviteLink. */
  INVITE: 'MODERATOR',
  /** Room.bannedParticipants, Room.mutedParticipants. */
  SEE_MODERATION: 'MODERATOR',
  /** pinMessage, unpinMessage. */
  PIN: 'OWNER',
  /** hideMessage and deleteMessage of someone else's message. */
  REMOVE_ANY_MESSAGE: 'OWNER',
  /** setRoomMetadata, setRoomVisibility. */
  EDIT_ROOM_DATA: 'OWNER',
  /** setRoomModerator. */
  CHANGE_ROLES: 'OWNER',
  /** transferRoomOwnership. */
  TRANSFER_OWNERSHIP: 'OWNER',
  /** deleteRoom. */
  DELETE_ROOM: 'OWNER',
} as const satisfies Record<string, RoomRole>;

export type RoomAction = keyof typeof REQUIRED_ROLE;

/** What a role is called in a refusal. */
const ROLE_NAME: Record<RoomRole, string> = { OWNER: "the room's owner", MODERATOR: "the room's owner and moderators", MEMBER: "the room's participants" };

type RoomRoles = RoomHead & Pick<RoomRecord, 'participants'>;

/** `login`'s role in the room as read: OWNER for its owner (Room.owner), taking part or not; null for anyone else who does not take part. */
export function roleIn(room: RoomRoles, login: string): RoomRole | null {
  if (room.ownerLogin === login) return 'OWNER';
  if (!isParticipant(room, login)) return null;
  return room.moderators.includes(login) ? 'MODERATOR' : 'MEMBER';
}

const atLeast = (role: RoomRole | null, needed: RoomRole) => role !== null && RANK[role] >= RANK[needed];

/**
 * Who a moderation write must find still a moderator: `login` when that is their role in the room as read (so a
 * demotion and their racing action are put in one order, src/db/rooms/moderation.ts), null for the owner.
 */
export const actingModerator = (room: RoomRoles, login: string): string | null => (roleIn(room, login) === 'MODERATOR' ? login : null);

/** Whether `login` may do `action` in the room as read. */
export const may = (room: RoomRoles, login: string, action: RoomAction): boolean => atLeast(roleIn(room, login), REQUIRED_ROLE[action]);

/** FORBIDDEN unless `login` may do `action` in the room as read. */
export function requireMay(room: RoomRoles, login: string, action: RoomAction, what: string): void {
  if (!may(room, login, action)) throw forbidden(`Only ${ROLE_NAME[REQUIRED_ROLE[action]]} may ${what}`);
}

/**
 * That `actor` may do `action` to `target` in the room as read: the action's role, and a rank above the target's.
 * Asked again of every fresh read an action retries on.
 */
export function requireMayActOn(room: RoomRoles, actor: string, target: string, action: RoomAction, what: string): void {
  requireMay(room, actor, action, what);
  const targetRole = roleIn(room, target);
  if (targetRole === 'OWNER') throw badInput('login', "The room's owner cannot be moderated");
  if (targetRole !== null && !(RANK[roleIn(room, actor)!] > RANK[targetRole])) {
    throw forbidden(`Only ${ROLE_NAME.OWNER} may ${what} a ${targetRole.toLowerCase()}`);
  }
}

/**
 * Who owns the room once `leaver` leaves it: when the leaver is its owner, the first of its moderators by login,
 * else the first of its other participants by login; null when the leaver does not own it, or is alone in it (they
 * keep it without taking part: a room is never left without an owner).
 */
export function heirOf(room: RoomRoles, leaver: string): string | null {
  if (room.ownerLogin !== leaver) return null;
  const others = [...new Set(room.participants.map((p) => p.login))].filter((login) => login !== leaver).sort();
  return others.find((login) => room.moderators.includes(login)) ?? others[0] ?? null;
}
