/**
 * Moderation writes on a room's row. Each is an LWT conditioned on the room's creator, so none can leave a row of
 * moderation data behind for a room deleted meanwhile (nor touch a new room of the same name by someone else), and
 * on who holds authority in it as read: the owner (owner_login), the admins and the moderators. So every change of
 * authority (a transfer, a promotion, a demotion) and a racing moderation action are put in one order: after it, the
 * action does not apply, and is judged again on the room as it is then. A ban also conditions on the participant set
 * it read, so a join racing it is ordered with it (see cql/009_room_moderation.cql). A ban takes the user off every
 * role too.
 */
import { cql, mapOf, type Database, type Statement } from '../cassandra/client.js';
import type { ChatUser } from './chat-user.js';
import { NO_ROLE, roleless, type MemberGrant, type RoomRecord } from './rooms.js';
import { FREE_SEAT, freeSeatOf, IF_SEAT_AS_READ, ifSeatAsRead } from './seats.js';

// The room read, not a room of the same name made since (by the same creator, perhaps), with its authority as read:
// who holds a role above member, and what members are granted (taking a grant back is a demotion of every member).
const AS_READ = 'owner_login = ? AND admins = ? AND moderators = ? AND member_grants = ?';
const IF_CREATOR = `WHERE room_name = ? IF creator_login = ? AND creation_date = ? AND ${AS_READ}`;

const guarded = (change: string, condition = IF_CREATOR): Statement => cql(`${change} ${condition}`, { idempotent: false });

/** What AS_READ binds: the room's owner, admins, moderators and member grants as read (an empty set is stored as null). */
export const authorityAsRead = (room: RoomRecord): unknown[] => [
  room.ownerStored,
  room.admins.length > 0 ? new Set(room.admins) : null,
  room.moderators.length > 0 ? new Set(room.moderators) : null,
  room.memberGrants.length > 0 ? new Set(room.memberGrants) : null,
];

/** Named roles and the set holding each: a member is in none. */
export type NamedRole = 'admin' | 'moderator' | 'guest';
const ROLE_SETS: Record<NamedRole, string> = { admin: 'admins', moderator: 'moderators', guest: 'guests' };
// The set of the role given gains the login; the others lose it. MEMBER: off all three (NO_ROLE).
const SET_ROLE = {
  member: guarded(`UPDATE chat_rooms SET ${NO_ROLE}`),
  ...Object.fromEntries(
    (Object.keys(ROLE_SETS) as NamedRole[]).map((role) => [
      role,
      guarded(`UPDATE chat_rooms SET ${Object.values(ROLE_SETS).map((set) => `${set} = ${set} ${set === ROLE_SETS[role] ? '+' : '-'} ?`).join(', ')}`),
    ]),
  ),
} as Record<NamedRole | 'member', Statement>;
// Both free the person's seat, as read (seats.ts).
const BAN = guarded(
  `UPDATE chat_rooms SET banned[?] = ?, participants = participants - ?, ${NO_ROLE}, ${FREE_SEAT}`,
  `WHERE room_name = ? IF creator_login = ? AND participants = ? AND ${AS_READ} AND ${IF_SEAT_AS_READ}`,
);
// A removal (no ban): the person leaves every role with their entries.
const REMOVE = guarded(`UPDATE chat_rooms SET participants = participants - ?, ${NO_ROLE}, ${FREE_SEAT}`, `${IF_CREATOR} AND ${IF_SEAT_AS_READ}`);
const UNBAN = guarded('UPDATE chat_rooms SET banned = banned - ?');
const MUTE = guarded('UPDATE chat_rooms USING TTL ? SET muted_until[?] = ?');
const UNMUTE = guarded('DELETE muted_until[?] FROM chat_rooms');
const SLOW_MODE = guarded('UPDATE chat_rooms SET slow_mode_seconds = ?');
const METADATA = guarded('UPDATE chat_rooms SET metadata = ?');
const VISIBILITY = guarded('UPDATE chat_rooms SET visibility = ?');
const MEMBER_GRANTS = guarded('UPDATE chat_rooms SET member_grants = ?');
const SELECT_STATE = cql('SELECT creator_login, creation_date, participants, moderators, admins, guests, banned, muted_until, slow_mode_seconds, metadata, visibility, member_grants FROM chat_rooms WHERE room_name = ?', {
  idempotent: true,
});

export type BanOutcome = 'banned' | 'changed' | 'gone';

const isSameRoom = (row: Record<string, unknown>, room: RoomRecord) =>
  row.creator_login === room.creatorLogin && (row.creation_date as Date | null)?.getTime() === room.createdAt.getTime();

export class ModerationStore {
  constructor(private readonly db: Database) {}

  /**
   * Runs an LWT that asks the room to still be `room`, its authority as read. After an unknown outcome, `landed` says
   * from the row read at SERIAL whether the change is there. False when it did not apply: the room is gone, or who
   * holds authority in it changed.
   */
  private async onRoom(
    room: RoomRecord,
    stmt: Statement,
    params: unknown[],
    landed: (row: Record<string, unknown>) => boolean,
    /** What conditions past IF_CREATOR's bind. */
    furtherConditions: unknown[] = [],
  ): Promise<boolean> {
    const outcome = await this.db.lwt(stmt, [...params, room.name, room.creatorLogin, room.createdAt, ...authorityAsRead(room), ...furtherConditions], async () => {
      const row = await this.db.readSerial(SELECT_STATE, [room.name]);
      return { applied: Boolean(row && isSameRoom(row, room) && landed(row)), row };
    });
    return outcome.applied;
  }

  /** Gives `login` a named role, or none ('member'): they are then in that role's set and in no other. */
  setRole(room: RoomRecord, login: string, role: NamedRole | 'member'): Promise<boolean> {
    const holds = (row: Record<string, unknown>, set: string) => ((row[set] as Set<string> | null) ?? new Set()).has(login);
    const landed = (row: Record<string, unknown>) => Object.values(ROLE_SETS).every((set) => holds(row, set) === (role !== 'member' && set === ROLE_SETS[role]));
    return this.onRoom(room, SET_ROLE[role], roleless(login), landed);
  }

  /** Takes `login`'s entries (as read) out of the participants, and `login` off every role (they may join again). */
  remove(room: RoomRecord, login: string, entries: ChatUser[]): Promise<boolean> {
    const takesPart = (row: Record<string, unknown>) => [...((row.participants as Set<ChatUser> | null) ?? [])].some((p) => p.login === login);
    return this.onRoom(room, REMOVE, [new Set(entries), ...roleless(login), ...freeSeatOf(room, login)], (row) => !takesPart(row), ifSeatAsRead(room, login));
  }

  unban(room: RoomRecord, login: string): Promise<boolean> {
    return this.onRoom(room, UNBAN, [new Set([login])], (row) => !mapOf<Date>(row.banned).has(login));
  }

  mute(room: RoomRecord, login: string, until: Date, ttlSeconds: number): Promise<boolean> {
    return this.onRoom(room, MUTE, [ttlSeconds, login, until], (row) => mapOf<Date>(row.muted_until).get(login)?.getTime() === until.getTime());
  }

  unmute(room: RoomRecord, login: string): Promise<boolean> {
    return this.onRoom(room, UNMUTE, [login], (row) => !mapOf<Date>(row.muted_until).has(login));
  }

  slowMode(room: RoomRecord, seconds: number | null): Promise<boolean> {
    return this.onRoom(room, SLOW_MODE, [seconds], (row) => (row.slow_mode_seconds ?? null) === seconds);
  }

  /** The room's custom data (JSON text; null: none). */
  metadata(room: RoomRecord, metadata: string | null): Promise<boolean> {
    return this.onRoom(room, METADATA, [metadata], (row) => (row.metadata ?? null) === metadata);
  }

  /** Who may find and join the room: 'PRIVATE', 'ON_REQUEST', or null for public (the column unset, as an open join asks). */
  visibility(room: RoomRecord, visibility: 'PRIVATE' | 'ON_REQUEST' | null): Promise<boolean> {
    return this.onRoom(room, VISIBILITY, [visibility], (row) => (row.visibility ?? null) === visibility);
  }

  /** What the room lets its members do beyond the member role's actions (none: the column unset). */
  memberGrants(room: RoomRecord, grants: MemberGrant[]): Promise<boolean> {
    const wanted = [...new Set(grants)].sort().join(',');
    const landed = (row: Record<string, unknown>) => [...((row.member_grants as Set<string> | null) ?? [])].sort().join(',') === wanted;
    return this.onRoom(room, MEMBER_GRANTS, [grants.length > 0 ? new Set(grants) : null], landed);
  }

  /**
   * Bans `login` and removes their entries from the participants, only if the participants and the room's
   * authority are still exactly those of `room` ('changed' otherwise: read the room again and retry).
   */
  async ban(room: RoomRecord, login: string, entries: ChatUser[], at: Date): Promise<BanOutcome> {
    const read = room.participants.length > 0 ? new Set(room.participants) : null;
    const params = [login, at, new Set(entries), ...roleless(login), ...freeSeatOf(room, login), room.name, room.creatorLogin, read, ...authorityAsRead(room), ...ifSeatAsRead(room, login)];
    const outcome = await this.db.lwt(BAN, params, async () => {
      const row = await this.db.readSerial(SELECT_STATE, [room.name]);
      return { applied: mapOf<Date>(row?.banned).get(login)?.getTime() === at.getTime(), row };
    });
    if (outcome.applied) return 'banned';
    return outcome.row?.creator_login === room.creatorLogin ? 'changed' : 'gone';
  }
}
