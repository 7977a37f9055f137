/**
 * Storage of the search backfill (src/resolvers/rooms/messages/search-backfill.ts):
 * every room message, page by page over the whole table, and the write of one
 * message's terms, applied only if the message is still the version that was
 * read. Messages posted before cql/008 have no terms, so search never finds
 * them until this has run.
 */
import { cql, type Database, type Row, type TimeUuid } from '../../cassandra/client.js';

const SCAN = cql(
  `SELECT room_name, time_bucket, message_id, content, author, system_message, visible, version, deleted, terms
   FROM chat_room_messages`,
  { idempotent: true },
);
// The edit's own conditions (src/db/rooms/messages/message-edits.ts) and the version read: an edit, a deletion or a
// hide that lands first leaves the row alone (an edit writes the terms of its own content in its LWT).
const INDEX = cql(
  `UPDATE chat_room_messages SET terms = ? WHERE room_name = ? AND time_bucket = ? AND message_id = ?
   IF version = ? AND deleted = null AND visible = null AND system_message = false`,
  { idempotent: false },
);
const TERMS_OF = cql('SELECT terms FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', {
  idempotent: true,
});

/** A stored message as the backfill sees it. */
export interface UnindexedCandidate {
  roomName: string;
  bucket: number;
  messageId: TimeUuid;
  /** As stored: null once deleted. */
  content: string | null;
  systemMessage: boolean;
  hidden: boolean;
  deleted: boolean;
  /** As stored: null for a message never edited. */
  version: number | null;
  indexed: boolean;
  /** False for the remains of a row a deletion took (an UPDATE racing it): never indexed. */
  whole: boolean;
}

const toCandidate = (row: Row): UnindexedCandidate => ({
  roomName: row.room_name,
  bucket: row.time_bucket,
  messageId: row.message_id,
  content: row.content ?? null,
  systemMessage: row.system_message === true,
  hidden: row.visible === false,
  deleted: row.deleted === true,
  version: row.version ?? null,
  indexed: row.terms != null,
  whole: Boolean(row.author),
});

export class SearchBackfillStore {
  constructor(private readonly db: Database) {}

  /** The table's messages, `pageSize` rows a page, in token order; each page once. */
  async *pages(pageSize: number): AsyncGenerator<UnindexedCandidate[]> {
    let pageState: string | undefined;
    do {
      const rs = await this.db.execute(SCAN, [], { fetchSize: pageSize, pageState });
      yield rs.rows.map(toCandidate);
      pageState = rs.pageState ?? undefined;
    } while (pageState);
  }

  /** Writes `terms` if the message is still as read; true when they are stored (by this or an earlier write). */
  async index(message: UnindexedCandidate, terms: string[]): Promise<boolean> {
    const key = [message.roomName, message.bucket, message.messageId];
    const outcome = await this.db.lwt(INDEX, [terms, ...key, message.version], async () => {
      // A timeout left the outcome unknown: whatever terms the row holds now are its current version's.
      const row = await this.db.readSerial(TERMS_OF, key);
      return { applied: row?.terms != null, row };
    });
    return outcome.applied;
  }
}
