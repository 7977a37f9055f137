/**
 * Storage of the seats backfill (src/resolvers/rooms/seats-backfill.ts): every room name in chat_rooms, page by page
 * in token order from a given token, and the progress it records in backfill_progress to resume from. The seating
 * itself is the room store's (rooms.ts `seat`), which a join also runs.
 */
import { cql, type Database } from '../cassandra/client.js';
import { BackfillProgress, type PartitionToken } from '../cassandra/backfill-progress.js';

const SCAN_FROM = cql('SELECT token(room_name) AS partition_token, room_name FROM chat_rooms WHERE token(room_name) >= ?', { idempotent: true });

/** A page of room names, and the token of its last one (null: an empty page). */
export interface RoomNamePage {
  names: string[];
  lastToken: PartitionToken | null;
}

export class SeatsBackfillStore {
  /** Its row in backfill_progress. */
  readonly progress: BackfillProgress;

  constructor(private readonly db: Database) {
    this.progress = new BackfillProgress(db, 'room_seats');
  }

  /** The names of the rooms from partition token `from` on, `pageSize` a page. */
  async *pages(from: PartitionToken, pageSize: number): AsyncGenerator<RoomNamePage> {
    let pageState: string | undefined;
    do {
      const rs = await this.db.execute(SCAN_FROM, [from], { fetchSize: pageSize, pageState });
      yield { names: rs.rows.map((row) => row.room_name as string), lastToken: (rs.rows.at(-1)?.partition_token as PartitionToken | undefined) ?? null };
      pageState = rs.pageState ?? undefined;
    } while (pageState);
  }
}
