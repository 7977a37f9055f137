/**
 * Moderation writes on a room's row. Each is an LWT conditioned on the
 * room's creator, so none can leave a row of moderation data behind for a
 * room deleted meanwhile (nor touch a new room of the same name by someone
 * else). Each also conditions on its actor still holding the role they acted
 * in (Actor): the owner on `owner_login` as read, an admin or a moderator on
 * `admins CONTAINS` or `moderators CONTAINS`, so a demotion and their racing
 * action are put in one order: after the demotion, the action does not apply.
 * A ban also conditions on the participant set it read, so a join racing it is
 * ordered with it (see cql/009_room_moderation.cql). A ban takes the user off
 * every role too.
 */
import { cql, mapOf, type Database, type Statement } from '../cassandra/client.js';
import type { ChatUser } from './chat-user.js';
import { NO_ROLE, roleless, type RoomRecord } from './rooms.js';

/** Who makes a change, in which role: the write asks them to still hold it. */
export type Actor = { as: 'owner' } | { as: 'admin' | 'moderator'; login: string };
export const OWNER: Actor = { as: 'owner' };

// The room read, not a room of the same name made since (by the same creator, perhaps).
const IF_CREATOR = 'WHERE room_name = ? IF creator_login = ? AND creation_date = ?';

/**
 * A change's statement as each actor makes it: the owner only while they still own the room (owner_login as read),
 * an admin or a moderator only while they still are one.
 */
const byActor = (change: string, condition = IF_CREATOR) => ({
  owner: cql(`${change} ${condition} AND owner_login = ?`, { idempotent: false }),
  admin: cql(`${change} ${condition} AND admins CONTAINS ?`, { idempotent: false }),
  moderator: cql(`${change} ${condition} AND moderators CONTAINS ?`, { idempotent: false }),
});
type ByActor = ReturnType<typeof byActor>;

/** The statement for `by`, and the value its last condition asks. */
const asActor = (byRole: ByActor, by: Actor, room: RoomRecord): [Statement, string | null] =>
  by.as === 'owner' ? [byRole.owner, room.ownerStored] : [byRole[by.as], by.login];

/** Named roles and the set holding each: a member is in none. */
export type NamedRole = 'admin' | 'moderator' | 'guest';
const ROLE_SETS: Record<NamedRole, string> = { admin: 'admins', moderator: 'moderators', guest: 'guests' };
// The set of the role given gains the login; the others lose it. MEMBER: off all three (NO_ROLE).
const SET_ROLE = {
  member: byActor(`UPDATE chat_rooms SET ${NO_ROLE}`),
  ...Object.fromEntries(
    (Object.keys(ROLE_SETS) as NamedRole[]).map((role) => [
      role,
      byActor(`UPDATE chat_rooms SET ${Object.values(ROLE_SETS).map((set) => `${set} = ${set} ${set === ROLE_SETS[role] ? '+' : '-'} ?`).join(', ')}`),
    ]),
  ),
} as Record<NamedRole | 'member', ByActor>;
const BAN = byActor(`UPDATE chat_rooms SET banned[?] = ?, participants = participants - ?, ${NO_ROLE}`, 'WHERE room_name = ? IF creator_login = ? AND participants = ?');
const UNBAN = byActor('UPDATE chat_rooms SET banned = banned - ?');
const MUTE = byActor('UPDATE chat_rooms USING TTL ? SET muted_until[?] = ?');
const UNMUTE = byActor('DELETE muted_until[?] FROM chat_rooms');
const SLOW_MODE = byActor('UPDATE chat_rooms SET slow_mode_seconds = ?');
const METADATA = byActor('UPDATE chat_rooms SET metadata = ?');
const VISIBILITY = byActor('UPDATE chat_rooms SET visibility = ?');
const SELECT_STATE = cql('SELECT creator_login, creation_date, participants, moderators, admins, guests, banned, muted_until, slow_mode_seconds, metadata, visibility FROM chat_rooms WHERE room_name = ?', {
  idempotent: true,
});

export type BanOutcome = 'banned' | 'changed' | 'gone';

const isSameRoom = (row: Record<string, unknown>, room: RoomRecord) =>
  row.creator_login === room.creatorLogin && (row.creation_date as Date | null)?.getTime() === room.createdAt.getTime();

export class ModerationStore {
  constructor(private readonly db: Database) {}

  /**
   * Runs an LWT that asks the room to still be `room` (same creator) and the actor to still hold their role. After
   * an unknown outcome, `landed` says from the row read at SERIAL whether the change is there. False when it did not
   * apply: the room is gone, or the actor holds the role no more.
   */
  private async onRoom(room: RoomRecord, byRole: ByActor, by: Actor, params: unknown[], landed: (row: Record<string, unknown>) => boolean): Promise<boolean> {
    const [stmt, asked] = asActor(byRole, by, room);
    const outcome = await this.db.lwt(stmt, [...params, room.name, room.creatorLogin, room.createdAt, asked], async () => {
      const row = await this.db.readSerial(SELECT_STATE, [room.name]);
      return { applied: Boolean(row && isSameRoom(row, room) && landed(row)), row };
    });
    return outcome.applied;
  }

  /** Gives `login` a named role, or none ('member'): they are then in that role's set and in no other. */
  setRole(room: RoomRecord, by: Actor, login: string, role: NamedRole | 'member'): Promise<boolean> {
    const holds = (row: Record<string, unknown>, set: string) => ((row[set] as Set<string> | null) ?? new Set()).has(login);
    const landed = (row: Record<string, unknown>) => Object.values(ROLE_SETS).every((set) => holds(row, set) === (role !== 'member' && set === ROLE_SETS[role]));
    return this.onRoom(room, SET_ROLE[role], by, roleless(login), landed);
  }

  unban(room: RoomRecord, by: Actor, login: string): Promise<boolean> {
    return this.onRoom(room, UNBAN, by, [new Set([login])], (row) => !mapOf<Date>(row.banned).has(login));
  }

  mute(room: RoomRecord, by: Actor, login: string, until: Date, ttlSeconds: number): Promise<boolean> {
    return this.onRoom(room, MUTE, by, [ttlSeconds, login, until], (row) => mapOf<Date>(row.muted_until).get(login)?.getTime() === until.getTime());
  }

  unmute(room: RoomRecord, by: Actor, login: string): Promise<boolean> {
    return this.onRoom(room, UNMUTE, by, [login], (row) => !mapOf<Date>(row.muted_until).has(login));
  }

  slowMode(room: RoomRecord, by: Actor, seconds: number | null): Promise<boolean> {
    return this.onRoom(room, SLOW_MODE, by, [seconds], (row) => (row.slow_mode_seconds ?? null) === seconds);
  }

  /** The room's custom data (JSON text; null: none). */
  metadata(room: RoomRecord, by: Actor, metadata: string | null): Promise<boolean> {
    return this.onRoom(room, METADATA, by, [metadata], (row) => (row.metadata ?? null) === metadata);
  }

  /** Who may find and join the room: 'PRIVATE', or null for public (the column unset, as an open join asks). */
  visibility(room: RoomRecord, by: Actor, visibility: 'PRIVATE' | null): Promise<boolean> {
    return this.onRoom(room, VISIBILITY, by, [visibility], (row) => (row.visibility ?? null) === visibility);
  }

  /**
   * Bans `login` and removes their entries from the participants, only if the
   * participants are still exactly those of `room` and `by` (when not null)
   * still moderates ('changed' otherwise: read the room again and retry).
   */
  async ban(room: RoomRecord, by: Actor, login: string, entries: ChatUser[], at: Date): Promise<BanOutcome> {
    const read = room.participants.length > 0 ? new Set(room.participants) : null;
    const [stmt, asked] = asActor(BAN, by, room);
    const params = [login, at, new Set(entries), ...roleless(login), room.name, room.creatorLogin, read, asked];
    const outcome = await this.db.lwt(stmt, params, async () => {
      const row = await this.db.readSerial(SELECT_STATE, [room.name]);
      return { applied: mapOf<Date>(row?.banned).get(login)?.getTime() === at.getTime(), row };
    });
    if (outcome.applied) return 'banned';
    return outcome.row?.creator_login === room.creatorLogin ? 'changed' : 'gone';
  }
}
