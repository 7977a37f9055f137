/**
 * Moderation writes on a room's row. Each is an LWT conditioned on the
 * room's creator, so none can leave a row of moderation data behind for a
 * room deleted meanwhile (nor touch a new room of the same name by someone
 * else). A ban also conditions on the participant set it read, so a join
 * racing it is ordered with it (see cql/009_room_moderation.cql). A ban takes the
 * user off the moderators too.
 */
import { cql, mapOf, type Database } from '../cassandra/client.js';
import type { ChatUser } from './chat-user.js';
import type { RoomRecord } from './rooms.js';

// The room read, not a room of the same name made since (by the same creator, perhaps).
const IF_CREATOR = 'WHERE room_name = ? IF creator_login = ? AND creation_date = ?';
const ADD_MODERATOR = cql(`UPDATE chat_rooms SET moderators = moderators + ? ${IF_CREATOR}`, { idempotent: false });
const REMOVE_MODERATOR = cql(`UPDATE chat_rooms SET moderators = moderators - ? ${IF_CREATOR}`, { idempotent: false });
const BAN = cql(
  'UPDATE chat_rooms SET banned[?] = ?, participants = participants - ?, moderators = moderators - ? WHERE room_name = ? IF creator_login = ? AND participants = ?',
  { idempotent: false },
);
const UNBAN = cql(`UPDATE chat_rooms SET banned = banned - ? ${IF_CREATOR}`, { idempotent: false });
const MUTE = cql(`UPDATE chat_rooms USING TTL ? SET muted_until[?] = ? ${IF_CREATOR}`, { idempotent: false });
const UNMUTE = cql(`DELETE muted_until[?] FROM chat_rooms ${IF_CREATOR}`, { idempotent: false });
const SLOW_MODE = cql(`UPDATE chat_rooms SET slow_mode_seconds = ? ${IF_CREATOR}`, { idempotent: false });
const METADATA = cql(`UPDATE chat_rooms SET metadata = ? ${IF_CREATOR}`, { idempotent: false });
const SELECT_STATE = cql('SELECT creator_login, creation_date, participants, moderators, banned, muted_until, slow_mode_seconds, metadata FROM chat_rooms WHERE room_name = ?', {
  idempotent: true,
});

export type BanOutcome = 'banned' | 'changed' | 'gone';

const isSameRoom = (row: Record<string, unknown>, room: RoomRecord) =>
  row.creator_login === room.creatorLogin && (row.creation_date as Date | null)?.getTime() === room.createdAt.getTime();

export class ModerationStore {
  constructor(private readonly db: Database) {}

  /**
   * Runs an LWT that only asks the room to still be `room` (same creator).
   * After an unknown outcome, `landed` says from the row read at SERIAL
   * whether the change is there. False when the room is gone.
   */
  private async onRoom(room: RoomRecord, stmt: ReturnType<typeof cql>, params: unknown[], landed: (row: Record<string, unknown>) => boolean): Promise<boolean> {
    const outcome = await this.db.lwt(stmt, [...params, room.name, room.creatorLogin, room.createdAt], async () => {
      const row = await this.db.readSerial(SELECT_STATE, [room.name]);
      return { applied: Boolean(row && isSameRoom(row, room) && landed(row)), row };
    });
    return outcome.applied;
  }

  setModerator(room: RoomRecord, login: string, moderator: boolean): Promise<boolean> {
    const has = (row: Record<string, unknown>) => ((row.moderators as Set<string> | null) ?? new Set()).has(login);
    return moderator
      ? this.onRoom(room, ADD_MODERATOR, [new Set([login])], has)
      : this.onRoom(room, REMOVE_MODERATOR, [new Set([login])], (row) => !has(row));
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

  /**
   * Bans `login` and removes their entries from the participants, only if the
   * participants are still exactly those of `room` ('changed' otherwise: read
   * the room again and retry).
   */
  async ban(room: RoomRecord, login: string, entries: ChatUser[], at: Date): Promise<BanOutcome> {
    const read = room.participants.length > 0 ? new Set(room.participants) : null;
    const params = [login, at, new Set(entries), new Set([login]), room.name, room.creatorLogin, read];
    const outcome = await this.db.lwt(BAN, params, async () => {
      const row = await this.db.readSerial(SELECT_STATE, [room.name]);
      return { applied: mapOf<Date>(row?.banned).get(login)?.getTime() === at.getTime(), row };
    });
    if (outcome.applied) return 'banned';
    return outcome.row?.creator_login === room.creatorLogin ? 'changed' : 'gone';
  }
}
