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
 * - Each action needs a role at least (REQUIRED_ROLE, the matrix docs/api.md shows; test/rooms/access/permissions.test.ts
 *   holds the two to each other). Roles rank OWNER > ADMIN > MODERATOR > MEMBER > GUEST.
 * - A room changes the matrix in two ways only (requiredRole): its kind (in an ANNOUNCEMENT room, POST needs ADMIN)
 *   and its member grants (an action granted to members needs MEMBER; a GROUP is created granting INVITE).
 * - An action on a person (remove, ban, unban, mute) also needs the actor to outrank them: a moderator acts on
 *   members, the owner on anyone, and nobody on the owner.
 * - A refusal is FORBIDDEN, saying which role the action needs.
 * - Every moderation write asks the room's authority (owner, admins, moderators) to be as read (db/rooms/moderation.ts):
 *   once a transfer, a promotion or a demotion applied, a racing action does not, and is judged again.
 */
import type { MemberGrant, RoomHead, RoomKind, RoomRecord, RoomVisibility } from '../../../db/rooms/rooms.js';
import { badInput, forbidden } from '../../../errors.js';
import { isParticipant } from './access.js';

export const ROOM_ROLES = ['OWNER', 'ADMIN', 'MODERATOR', 'MEMBER', 'GUEST'] as const;
export type RoomRole = (typeof ROOM_ROLES)[number];

const RANK: Record<RoomRole, number> = { OWNER: 5, ADMIN: 4, MODERATOR: 3, MEMBER: 2, GUEST: 1 };

/** What the matrix governs, by the operation that does it. */
export const REQUIRED_ROLE = {
  /** postMessage (a reply too), forwardMessage into the room, editMessage (of one's own), sendTyping. */
  POST: 'MEMBER',
  /** addReaction, removeReaction, votePoll. */
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
  /** approveJoinRequest, declineJoinRequest, Room.joinRequests. */
  APPROVE: 'MODERATOR',
  /** Room.bannedParticipants, Room.mutedParticipants. */
  SEE_MODERATION: 'MODERATOR',
  /** pinMessage, unpinMessage. */
  PIN: 'ADMIN',
  /** Room.auditLog. */
  SEE_AUDIT_LOG: 'ADMIN',
  /** hideMessage and deleteMessage of someone else's message. */
  REMOVE_ANY_MESSAGE: 'ADMIN',
  /** setRoomMetadata, setRoomVisibility, setRoomMemberPermissions. */
  EDIT_ROOM_DATA: 'ADMIN',
  /** setRoomRole and setRoomModerator: to a role below one's own, of someone below one's own. */
  CHANGE_ROLES: 'ADMIN',
  /** transferRoomOwnership. */
  TRANSFER_OWNERSHIP: 'OWNER',
  /** deleteRoom. */
  DELETE_ROOM: 'OWNER',
} as const satisfies Record<string, RoomRole>;

export type RoomAction = keyof typeof REQUIRED_ROLE;

/** What each kind of room is created with, unless createRoom says otherwise (visibility only). */
export const KIND_DEFAULTS: Record<RoomKind, { visibility: RoomVisibility; memberGrants: MemberGrant[] }> = {
  CHANNEL: { visibility: 'PUBLIC', memberGrants: [] },
  GROUP: { visibility: 'PRIVATE', memberGrants: ['INVITE'] },
  ANNOUNCEMENT: { visibility: 'PUBLIC', memberGrants: [] },
  LIVESTREAM: { visibility: 'PUBLIC', memberGrants: [] },
};

/**
 * BAD_USER_INPUT (on roomName) for what a livestream room does not have: typing and presence. Its feed carries
 * messages only (carriedBy, live/feed.ts), so that a room of many watchers fans out what they came for.
 */
export function requireNotLivestream(room: Pick<RoomHead, 'kind'>, what: string): void {
  if (room.kind === 'LIVESTREAM') throw badInput('roomName', `A livestream room has no ${what}`);
}

/** What a role is called in a refusal. */
const ROLE_NAME: Record<RoomRole, string> = {
  OWNER: "the room's owner",
  ADMIN: "the room's owner and admins",
  MODERATOR: "the room's owner, admins and moderators",
  MEMBER: "the room's participants but its guests",
  GUEST: "the room's participants",
};

type RoomRoles = RoomHead & Pick<RoomRecord, 'participants'>;

/** `login`'s role in the room as read: OWNER for its owner (Room.owner), taking part or not; null for anyone else who does not take part. */
export function roleIn(room: RoomRoles, login: string): RoomRole | null {
  if (room.ownerLogin === login) return 'OWNER';
  if (!isParticipant(room, login)) return null;
  if (room.admins.includes(login)) return 'ADMIN';
  if (room.moderators.includes(login)) return 'MODERATOR';
  return room.guests.includes(login) ? 'GUEST' : 'MEMBER';
}

const atLeast = (role: RoomRole | null, needed: RoomRole) => role !== null && RANK[role] >= RANK[needed];

/** BAD_USER_INPUT unless `actor` outranks the role they give (the owner gives any role but their own). */
export function requireMayGive(room: RoomRoles, actor: string, role: RoomRole): void {
  if (role === 'OWNER') throw badInput('role', 'The ownership is handed on with transferRoomOwnership');
  if (!(RANK[roleIn(room, actor) ?? 'GUEST'] > RANK[role])) throw forbidden(`Only someone who outranks a ${role.toLowerCase()} may give that role`);
}

/**
 * The role `action` needs in the room as read: the matrix's, but for what its kind rules (only the owner and admins
 * post in an announcement room) and what it lets its members do (memberGrants: a group's members invite).
 */
export function requiredRole(room: RoomRoles, action: RoomAction): RoomRole {
  if (action === 'POST' && room.kind === 'ANNOUNCEMENT') return 'ADMIN';
  if ((room.memberGrants as string[]).includes(action) && RANK[REQUIRED_ROLE[action]] > RANK.MEMBER) return 'MEMBER';
  return REQUIRED_ROLE[action];
}

/** Whether `login` may do `action` in the room as read. */
export const may = (room: RoomRoles, login: string, action: RoomAction): boolean => atLeast(roleIn(room, login), requiredRole(room, action));

/** FORBIDDEN unless `login` may do `action` in the room as read. */
export function requireMay(room: RoomRoles, login: string, action: RoomAction, what: string): void {
  if (!may(room, login, action)) throw forbidden(`Only ${ROLE_NAME[requiredRole(room, action)]} may ${what}`);
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
    throw forbidden(`Only someone who outranks a ${targetRole.toLowerCase()} may ${what} them`);
  }
}

/**
 * That `actor` may remove (hide or delete) a message of `author`'s: REMOVE_ANY_MESSAGE, and a rank above the author's
 * while the author takes part (an admin removes a moderator's message, not another admin's, nor the owner's).
 */
export function requireMayRemoveMessageOf(room: RoomRoles, actor: string, author: string, what: string): void {
  requireMay(room, actor, 'REMOVE_ANY_MESSAGE', what);
  const authorRole = roleIn(room, author);
  if (authorRole !== null && !(RANK[roleIn(room, actor)!] > RANK[authorRole])) {
    throw forbidden(`Only someone who outranks a ${authorRole.toLowerCase()} may ${what}`);
  }
}

/**
 * Who owns the room once `leaver` leaves it: when the leaver is its owner, the first by login of those of the highest
 * role among the others (admins, then moderators, then members, then guests); null when the leaver does not own it,
 * or is alone in it (they keep it without taking part: a room is never left without an owner).
 */
export function heirOf(room: RoomRoles, leaver: string): string | null {
  if (room.ownerLogin !== leaver) return null;
  const others = [...new Set(room.participants.map((p) => p.login))].filter((login) => login !== leaver).sort();
  const rank = (login: string) => RANK[roleIn(room, login) ?? 'GUEST'];
  return others.reduce<string | null>((best, login) => (best === null || rank(login) > rank(best) ? login : best), null);
}
