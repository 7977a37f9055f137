/**
 * Storage of the room_readers backfill (src/resolvers/rooms/readers-backfill.ts):
 * every read marker in room_read_markers, page by page in token order from a
 * given token, the copy of one marker into room_readers, and the progress
 * the backfill records in backfill_progress (cql/021) to resume from.
 */
import { cql, type Database } from '../cassandra/client.js';
import { BackfillProgress, type PartitionToken } from '../cassandra/backfill-progress.js';
import type { WriteTimestamp } from '../cassandra/write-timestamp.js';

export { FIRST_TOKEN, type PartitionToken } from '../cassandra/backfill-progress.js';

const SCAN_FROM = cql(
  `SELECT token(login) AS partition_token, login, room_name, read_up_to, WRITETIME(read_up_to) AS written
   FROM room_read_markers WHERE token(login) >= ?`,
  { idempotent: true },
);
// The live path's copy (read-state.ts), at the marker's own write time: a copy of a marker that has moved since
// it was read is older than the moved marker's copy, and loses to it whichever lands last.
const COPY = cql('INSERT INTO room_readers (room_name, login, read_up_to) VALUES (?, ?, ?) USING TIMESTAMP ?', { idempotent: true });

/** A read marker as stored, with its write time. */
export interface StoredMarker {
  login: string;
  roomName: string;
  readUpTo: string;
  written: WriteTimestamp;
}

/** A page of markers, and the token of the partition its last row is in (null: an empty page). */
export interface MarkerPage {
  markers: StoredMarker[];
  lastToken: PartitionToken | null;
}

export class ReadersBackfillStore {
  /** Its row in backfill_progress. */
  private readonly progress: BackfillProgress;

  constructor(private readonly db: Database) {
    this.progress = new BackfillProgress(db, 'room_readers');
  }

  /** The markers from partition token `from` on (that partition whole), `pageSize` rows a page; rows without a marker are left out. */
  async *pages(from: PartitionToken, pageSize: number): AsyncGenerator<MarkerPage> {
    let pageState: string | undefined;
    do {
      const rs = await this.db.execute(SCAN_FROM, [from], { fetchSize: pageSize, pageState });
      const markers = rs.rows
        .filter((row) => row.read_up_to != null && row.written != null)
        .map((row) => ({ login: row.login as string, roomName: row.room_name as string, readUpTo: row.read_up_to.toString() as string, written: row.written as WriteTimestamp }));
      yield { markers, lastToken: (rs.rows.at(-1)?.partition_token as PartitionToken | undefined) ?? null };
      pageState = rs.pageState ?? undefined;
    } while (pageState);
  }

  /** Writes the room's copy of a marker at the marker's write time. */
  async copy(marker: StoredMarker): Promise<void> {
    await this.db.execute(COPY, [marker.roomName, marker.login, marker.readUpTo, marker.written]);
  }

  /** The token an interrupted run recorded (null: none, start from the first). */
  resumeToken(): Promise<PartitionToken | null> {
    return this.progress.resumeToken();
  }

  saveProgress(token: PartitionToken): Promise<void> {
    return this.progress.save(token);
  }

  /** The run reached the end: the next one starts over. */
  clearProgress(): Promise<void> {
    return this.progress.clear();
  }
}
