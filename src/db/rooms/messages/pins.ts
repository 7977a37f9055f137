/**
 * A room's pinned messages: a list of message ids in the room's row, in pin
 * order. Changed by an LWT on the list as read (and on the creator, so a pin
 * racing the room's deletion cannot leave a row holding only pins, and on the
 * room's authority as read, so a pin racing a transfer, a promotion or a
 * demotion does not apply after it); a
 * concurrent change makes it read again, a bounded number of times. This
 * instance's changes to one room's pins run one at a time (OneAtATime), so
 * that a burst of pins contends in the process rather than in Paxos.
 */
import { cql, type Database, type Row } from '../../cassandra/client.js';
import { authorityAsRead } from '../moderation.js';
import type { RoomRecord } from '../rooms.js';

/** Whether values read back (sets as Set, or null) are those bound. */
const sameValue = (read: unknown[], bound: unknown[]) =>
  JSON.stringify(read.map((v) => (v instanceof Set ? [...v].sort() : v))) === JSON.stringify(bound.map((v) => (v instanceof Set ? [...v].sort() : v)));
import { OneAtATime } from '../../cassandra/one-at-a-time.js';

const SELECT_PINS = cql('SELECT pinned_messages, creator_login, owner_login, admins, moderators, member_grants FROM chat_rooms WHERE room_name = ?', { idempotent: true });
const SET_PINS = cql('UPDATE chat_rooms SET pinned_messages = ? WHERE room_name = ? IF creator_login = ? AND owner_login = ? AND admins = ? AND moderators = ? AND member_grants = ? AND pinned_messages = ?', {
  idempotent: false,
});

const idsOf = (value: unknown) => ((value as Array<{ toString(): string }> | null) ?? []).map((id) => id.toString());

export type PinChange = (pins: string[]) => string[] | 'unchanged' | 'full';

export interface PinOutcome {
  /** 'deposed': the room's authority (owner, admins, moderators) is not the one read. */
  status: 'changed' | 'unchanged' | 'full' | 'gone' | 'contended' | 'deposed';
  pins: string[];
}

export class PinStore {
  private readonly changes = new OneAtATime();

  constructor(private readonly db: Database) {}

  /** The room's pinned message ids, in pin order (empty for no room). */
  async pins(roomName: string): Promise<string[]> {
    return idsOf((await this.db.first(SELECT_PINS, [roomName]))?.pinned_messages);
  }

  /**
   * Applies `change` to the pins as they are, with an LWT on the list read;
   * reads again and retries while other changes get in first ('contended'
   * after `attempts`). 'gone' when the
   * room no longer exists (or has another creator: a room of the same name).
   */
  async change(room: RoomRecord, change: PinChange, attempts: number): Promise<PinOutcome> {
    return this.changes.run(room.name, () => this.changeNow(room, change, attempts));
  }

  private async changeNow(room: RoomRecord, change: PinChange, attempts: number): Promise<PinOutcome> {
    const { name: roomName, creatorLogin } = room;
    const authority = authorityAsRead(room);
    const sameAuthority = (row: Row) => sameValue([row.owner_login ?? null, row.admins ?? null, row.moderators ?? null, row.member_grants ?? null], authority);
    let row = await this.db.readSerial(SELECT_PINS, [roomName]);
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (!row || row.creator_login !== creatorLogin) return { status: 'gone', pins: [] };
      if (!sameAuthority(row)) return { status: 'deposed', pins: [] };
      const current = idsOf(row.pinned_messages);
      const next = change(current);
      if (next === 'unchanged' || next === 'full') return { status: next, pins: current };
      const outcome = await this.db.lwt(SET_PINS, [next, roomName, creatorLogin, ...authority, current.length ? current : null], async () => {
        const now = await this.db.readSerial(SELECT_PINS, [roomName]);
        return { applied: JSON.stringify(idsOf(now?.pinned_messages)) === JSON.stringify(next), row: now };
      });
      if (outcome.applied) return { status: 'changed', pins: next };
      row = outcome.row && 'creator_login' in outcome.row ? outcome.row : await this.db.readSerial(SELECT_PINS, [roomName]);
    }
    return { status: 'contended', pins: [] };
  }
}
