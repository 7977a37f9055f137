/**
 * Read state: each participant's read marker per room (room_read_markers, and
 * its copy by room, room_readers) and the mentions of each person per room
 * (room_mentions). A post writes no row per participant: only one per person
 * it mentions, in its own batch. A user's markers share one partition, so
 * this instance's marker changes for one user run one at a time (OneAtATime)
 * and a change losing to other instances tries a bounded number of times
 * (contention.ts): a burst of marks contends in the process, not in Paxos.
 */
import { cql, type Database, type Row, type Statement } from '../cassandra/client.js';
import { CONTENDED_ATTEMPTS, pauseAfterLosing } from '../cassandra/contention.js';
import { OneAtATime } from '../cassandra/one-at-a-time.js';
import type { MessageRecord } from './messages/message-row.js';
import type { WriteTimestamp } from '../cassandra/write-timestamp.js';
import { Limits } from '../../limits.js';

const SELECT_MARKERS = cql('SELECT room_name, read_up_to FROM room_read_markers WHERE login = ?', { idempotent: true });
const SELECT_MARKER = cql('SELECT read_up_to, WRITETIME(read_up_to) AS written FROM room_read_markers WHERE login = ? AND room_name = ?', {
  idempotent: true,
});
const COPY_READER = cql('INSERT INTO room_readers (room_name, login, read_up_to) VALUES (?, ?, ?) USING TIMESTAMP ?', { idempotent: true });
const SELECT_READERS = cql('SELECT login, read_up_to FROM room_readers WHERE room_name = ?', { idempotent: true });
const DROP_READERS = cql('DELETE FROM room_readers USING TIMESTAMP ? WHERE room_name = ?', { idempotent: true });
const SET_MARKER = cql('UPDATE room_read_markers SET read_up_to = ? WHERE login = ? AND room_name = ? IF read_up_to = ?', {
  idempotent: false,
});
const ADD_MENTION = cql('INSERT INTO room_mentions (login, room_name, message_id) VALUES (?, ?, ?)', { idempotent: true });
const REMOVE_MENTION = cql('DELETE FROM room_mentions WHERE login = ? AND room_name = ? AND message_id = ?', { idempotent: true });
// Oldest first: those a read state's walk covers (it starts at the marker) come before any cut.
const MENTIONS_AFTER = cql(
  'SELECT message_id FROM room_mentions WHERE login = ? AND room_name = ? AND message_id > ? ORDER BY message_id ASC LIMIT ?',
  { idempotent: true },
);
const MENTIONS_ALL = cql('SELECT message_id FROM room_mentions WHERE login = ? AND room_name = ? ORDER BY message_id ASC LIMIT ?', {
  idempotent: true,
});
const DROP_MARKER = cql('DELETE FROM room_read_markers USING TIMESTAMP ? WHERE login = ? AND room_name = ?', { idempotent: true });
const DROP_MENTIONS = cql('DELETE FROM room_mentions USING TIMESTAMP ? WHERE login = ? AND room_name = ?', { idempotent: true });

/** The mention rows a post writes in its batch: one per person its content mentions (but its author). */
export function mentionWrites(message: MessageRecord): Array<{ stmt: Statement; params: unknown[] }> {
  return message.mentions
    .filter((p) => p.login !== message.author.login)
    .map((p) => ({ stmt: ADD_MENTION, params: [p.login, message.roomName, message.messageId] }));
}

export type MarkerChange = (current: string | null) => string | null | 'unchanged';

/** How a marker change ended: the marker as it is now, or 'contended' (other changes kept getting in first; nothing changed). */
export type MarkerOutcome = { status: 'done'; marker: string | null } | { status: 'contended' };

export class ReadStateStore {
  /** Marker changes of this instance, one at a time per user (the partition). */
  private readonly changes = new OneAtATime();

  constructor(private readonly db: Database) {}

  /** Every read marker of a user, by room (null: the room has a row without a marker). */
  async markers(login: string): Promise<Map<string, string | null>> {
    const rs = await this.db.execute(SELECT_MARKERS, [login]);
    return new Map(rs.rows.map((r) => [r.room_name as string, r.read_up_to?.toString() ?? null]));
  }

  /**
   * Applies `change` to the marker as it is (read at SERIAL), with an LWT on
   * that value; reads again and retries, after a random pause, while other
   * instances' changes get in first: 'contended' after CONTENDED_ATTEMPTS.
   * Answers the marker as it ends.
   */
  change(login: string, roomName: string, change: MarkerChange): Promise<MarkerOutcome> {
    return this.changes.run(login, () => this.changeNow(login, roomName, change));
  }

  private async changeNow(login: string, roomName: string, change: MarkerChange): Promise<MarkerOutcome> {
    let row = await this.db.readSerial(SELECT_MARKER, [login, roomName]);
    for (let attempt = 1; ; attempt++) {
      const current = row?.read_up_to?.toString() ?? null;
      const next = change(current);
      if (next === 'unchanged' || next === current) {
        // The copy of a marker as it is (again: a copy whose write failed after its LWT is written now).
        await this.copyToRoom(login, roomName, row);
        return { status: 'done', marker: current };
      }
      const outcome = await this.db.lwt(SET_MARKER, [next, login, roomName, current], async () => {
        const read = await this.db.readSerial(SELECT_MARKER, [login, roomName]);
        return { applied: (read?.read_up_to?.toString() ?? null) === next, row: read };
      });
      if (outcome.applied) {
        // The row with its write time, for the copy: read at SERIAL, after the LWT's outcome.
        await this.copyToRoom(login, roomName, await this.db.readSerial(SELECT_MARKER, [login, roomName]));
        return { status: 'done', marker: next };
      }
      if (attempt >= CONTENDED_ATTEMPTS) return { status: 'contended' };
      await pauseAfterLosing(attempt);
      // Read after the pause: the change is decided again on the marker as the winners left it.
      row = await this.db.readSerial(SELECT_MARKER, [login, roomName]);
    }
  }

  /** Writes the room's copy of a marker with the marker's own write time: the last change's copy wins, whatever the order. */
  private async copyToRoom(login: string, roomName: string, row: Row | undefined): Promise<void> {
    if (!row?.read_up_to || row.written == null) return;
    await this.db.execute(COPY_READER, [roomName, login, row.read_up_to, row.written]);
  }

  /**
   * Every read marker in a room's partition, by login: one request while it holds at most 2,000 rows (a room has at
   * most 1,000 participants; those who left keep a row, which seenBy passes over), more past that.
   */
  async readersOf(roomName: string): Promise<Map<string, string>> {
    const rows = await this.db.allRows(SELECT_READERS, [roomName], 2 * Limits.room.maxParticipants);
    return new Map(rows.map((r) => [r.login as string, r.read_up_to.toString() as string]));
  }

  /** The ids of the room's messages that mention the user after `after` (all of them when null), oldest first, at most `limit`. */
  async mentionsAfter(login: string, roomName: string, after: string | null, limit: number): Promise<string[]> {
    const rs = after
      ? await this.db.execute(MENTIONS_AFTER, [login, roomName, after, limit])
      : await this.db.execute(MENTIONS_ALL, [login, roomName, limit]);
    return rs.rows.map((row) => row.message_id.toString());
  }

  /** Follows a message's mentions as an edit or a deletion changed them. */
  async updateMentions(message: MessageRecord, added: string[], removed: string[]): Promise<void> {
    const queries = [
      ...added.map((login) => ({ stmt: ADD_MENTION, params: [login, message.roomName, message.messageId] })),
      ...removed.map((login) => ({ stmt: REMOVE_MENTION, params: [login, message.roomName, message.messageId] })),
    ];
    if (queries.length > 0) await this.db.batch(queries, { logged: false });
  }

  /** A deleted room's read state, as of its deletion (a room of the same name created since keeps its own). */
  async dropRoom(roomName: string, logins: Iterable<string>, at: WriteTimestamp): Promise<void> {
    const queries = [...new Set(logins)].flatMap((login) => [
      { stmt: DROP_MARKER, params: [at, login, roomName] },
      { stmt: DROP_MENTIONS, params: [at, login, roomName] },
    ]);
    await this.db.batchInChunks(queries, Limits.room.cleanupBatch);
    await this.db.execute(DROP_READERS, [at, roomName]);
  }
}
