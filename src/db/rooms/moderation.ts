/**
 * Moderation writes on a room's row. Each is an LWT conditioned on the
 * room's creator, so none can leave a row of moderation data behind for a
 * room deleted meanwhile (nor touch a new room of the same name by someone
 * else). One a moderator makes also conditions on them still being one
 * (`moderators CONTAINS`), so a demotion and their racing action are put in
 * one order: after the demotion, the action does not apply. A ban also
 * conditions on the participant set it read, so a join racing it is ordered
 * with it (see cql/009_room_moderation.cql). A ban takes the user off the
 * moderators too.
 */
import { cql, mapOf, type Database } from '../cassandra/client.js';
import type { ChatUser } from './chat-user.js';
import type { RoomRecord } from './rooms.js';

// The room read, not a room of the same name made since (by the same creator, perhaps).
const IF_CREATOR = 'WHERE room_name = ? IF creator_login = ? AND creation_date = ?';
const STILL_MODERATOR = ' AND moderators CONTAINS ?';

/**
 * A change's statement as the owner makes it (only while they still own the room: owner_login as read), and as a
 * moderator does (only while they still are one).
 */
const byOwnerOrModerator = (change: string, condition = IF_CREATOR) => ({
  owner: cql(`${change} ${condition} AND owner_login = ?`, { idempotent: false }),
  moderator: cql(`${change} ${condition}${STILL_MODERATOR}`, { idempotent: false }),
});
type ByRole = ReturnType<typeof byOwnerOrModerator>;

const ADD_MODERATOR = byOwnerOrModerator('UPDATE chat_rooms SET moderators = moderators + ?');
const REMOVE_MODERATOR = byOwnerOrModerator('UPDATE chat_rooms SET moderators = moderators - ?');
const BAN = byOwnerOrModerator(
  'UPDATE chat_rooms SET banned[?] = ?, participants = participants - ?, moderators = moderators - ?',
  'WHERE room_name = ? IF creator_login = ? AND participants = ?',
);
const UNBAN = byOwnerOrModerator('UPDATE chat_rooms SET banned = banned - ?');
const MUTE = byOwnerOrModerator('UPDATE chat_rooms USING TTL ? SET muted_until[?] = ?');
const UNMUTE = byOwnerOrModerator('DELETE muted_until[?] FROM chat_rooms');
const SLOW_MODE = byOwnerOrModerator('UPDATE chat_rooms SET slow_mode_seconds = ?');
const METADATA = byOwnerOrModerator('UPDATE chat_rooms SET metadata = ?');
const VISIBILITY = byOwnerOrModerator('UPDATE chat_rooms SET visibility = ?');
const SELECT_STATE = cql('SELECT creator_login, creation_date, participants, moderators, banned, muted_until, slow_mode_seconds, metadata, visibility FROM chat_rooms WHERE room_name = ?', {
  idempotent: true,
});

export type BanOutcome = 'banned' | 'changed' | 'gone';

const isSameRoom = (row: Record<string, unknown>, room: RoomRecord) =>
  row.creator_login === room.creatorLogin && (row.creation_date as Date | null)?.getTime() === room.createdAt.getTime();

export class ModerationStore {
  constructor(private readonly db: Database) {}

  /**
   * Runs an LWT that asks the room to still be `room` (same creator) and, when `moderator` names the actor, them to
   * still be a moderator. After an unknown outcome, `landed` says from the row read at SERIAL whether the change is
   * there. False when it did not apply: the room is gone, or the moderator is one no more.
   */
  private async onRoom(
    room: RoomRecord,
    byRole: ByRole,
    moderator: string | null,
    params: unknown[],
    landed: (row: Record<string, unknown>) => boolean,
  ): Promise<boolean> {
    const [stmt, asked] = moderator === null ? [byRole.owner, [room.ownerStored]] : [byRole.moderator, [moderator]];
    const outcome = await this.db.lwt(stmt, [...params, room.name, room.creatorLogin, room.createdAt, ...asked], async () => {
      const row = await this.db.readSerial(SELECT_STATE, [room.name]);
      return { applied: Boolean(row && isSameRoom(row, room) && landed(row)), row };
    });
    return outcome.applied;
  }

  /** `by`: the acting moderator, whom the change asks to still be one; null for the owner. So for each below. */
  setModerator(room: RoomRecord, by: string | null, login: string, moderator: boolean): Promise<boolean> {
    const has = (row: Record<string, unknown>) => ((row.moderators as Set<string> | null) ?? new Set()).has(login);
    return moderator
      ? this.onRoom(room, ADD_MODERATOR, by, [new Set([login])], has)
      : this.onRoom(room, REMOVE_MODERATOR, by, [new Set([login])], (row) => !has(row));
  }

  unban(room: RoomRecord, by: string | null, login: string): Promise<boolean> {
    return this.onRoom(room, UNBAN, by, [new Set([login])], (row) => !mapOf<Date>(row.banned).has(login));
  }

  mute(room: RoomRecord, by: string | null, login: string, until: Date, ttlSeconds: number): Promise<boolean> {
    return this.onRoom(room, MUTE, by, [ttlSeconds, login, until], (row) => mapOf<Date>(row.muted_until).get(login)?.getTime() === until.getTime());
  }

  unmute(room: RoomRecord, by: string | null, login: string): Promise<boolean> {
    return this.onRoom(room, UNMUTE, by, [login], (row) => !mapOf<Date>(row.muted_until).has(login));
  }

  slowMode(room: RoomRecord, by: string | null, seconds: number | null): Promise<boolean> {
    return this.onRoom(room, SLOW_MODE, by, [seconds], (row) => (row.slow_mode_seconds ?? null) === seconds);
  }

  /** The room's custom data (JSON text; null: none). */
  metadata(room: RoomRecord, by: string | null, metadata: string | null): Promise<boolean> {
    return this.onRoom(room, METADATA, by, [metadata], (row) => (row.metadata ?? null) === metadata);
  }

  /** Who may find and join the room: 'PRIVATE', or null for public (the column unset, as an open join asks). */
  visibility(room: RoomRecord, by: string | null, visibility: 'PRIVATE' | null): Promise<boolean> {
    return this.onRoom(room, VISIBILITY, by, [visibility], (row) => (row.visibility ?? null) === visibility);
  }

  /**
   * Bans `login` and removes their entries from the participants, only if the
   * participants are still exactly those of `room` and `by` (when not null)
   * still moderates ('changed' otherwise: read the room again and retry).
   */
  async ban(room: RoomRecord, by: string | null, login: string, entries: ChatUser[], at: Date): Promise<BanOutcome> {
    const read = room.participants.length > 0 ? new Set(room.participants) : null;
    const params = [login, at, new Set(entries), new Set([login]), room.name, room.creatorLogin, read, by ?? room.ownerStored];
    const outcome = await this.db.lwt(by === null ? BAN.owner : BAN.moderator, params, async () => {
      const row = await this.db.readSerial(SELECT_STATE, [room.name]);
      return { applied: mapOf<Date>(row?.banned).get(login)?.getTime() === at.getTime(), row };
    });
    if (outcome.applied) return 'banned';
    return outcome.row?.creator_login === room.creatorLogin ? 'changed' : 'gone';
  }
}
