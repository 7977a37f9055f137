/**
 * Uploaded files' rows (attachments) and the list of uploads not yet attached
 * (unattached_uploads), whose bytes live behind FileBytes (file-bytes.ts).
 * An upload is listed before its bytes are written and its row after them;
 * attaching it to a message is an LWT, so one upload belongs to one message.
 */
import { cql, type Database, type Row } from '../cassandra/client.js';
import type { StoredBytes } from './file-bytes.js';

export interface AttachmentRecord extends StoredBytes {
  id: string;
  owner: string;
  filename: string;
  contentType: string;
  width: number | null;
  height: number | null;
  /** The message it is attached to; null until then. */
  roomName: string | null;
  messageId: string | null;
}

const LIST_UNATTACHED = cql('INSERT INTO unattached_uploads (day, id) VALUES (?, ?)', { idempotent: true });
const UNLIST = cql('DELETE FROM unattached_uploads WHERE day = ? AND id = ?', { idempotent: true });
const UNATTACHED_ON = cql('SELECT id FROM unattached_uploads WHERE day = ?', { idempotent: true });
const INSERT = cql(
  `INSERT INTO attachments (id, owner, filename, content_type, size, sha256, chunk_bytes, width, height)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  { idempotent: true },
);
const SELECT = cql(
  'SELECT id, owner, filename, content_type, size, sha256, chunk_bytes, width, height, room_name, message_id FROM attachments WHERE id IN ?',
  { idempotent: true },
);
const ATTACH = cql('UPDATE attachments SET room_name = ?, message_id = ? WHERE id = ? IF owner = ? AND message_id = null', { idempotent: false });
const SELECT_ATTACHED = cql('SELECT owner, message_id FROM attachments WHERE id = ?', { idempotent: true });
const DROP = cql('DELETE FROM attachments WHERE id = ?', { idempotent: true });
const DROP_IF_UNATTACHED = cql('DELETE FROM attachments WHERE id = ? IF message_id = null', { idempotent: false });

const toRecord = (row: Row): AttachmentRecord => ({
  id: row.id.toString(),
  owner: row.owner,
  filename: row.filename,
  contentType: row.content_type,
  size: row.size,
  sha256: row.sha256,
  chunkBytes: row.chunk_bytes,
  width: row.width ?? null,
  height: row.height ?? null,
  roomName: row.room_name ?? null,
  messageId: row.message_id?.toString() ?? null,
});

export class AttachmentStore {
  constructor(private readonly db: Database) {}

  /** Lists an upload about to be written: a cleanup finds it if it never completes or is never attached. */
  async listUnattached(day: number, id: string): Promise<void> {
    await this.db.execute(LIST_UNATTACHED, [day, id]);
  }

  async unlist(day: number, id: string): Promise<void> {
    await this.db.execute(UNLIST, [day, id]);
  }

  async unattachedOn(day: number): Promise<string[]> {
    return (await this.db.allRows(UNATTACHED_ON, [day], 1000)).map((r) => r.id.toString());
  }

  /** The file's row: written once its bytes are all stored, it makes the upload readable. */
  async insert(record: Omit<AttachmentRecord, 'roomName' | 'messageId'>): Promise<void> {
    const { id, owner, filename, contentType, size, sha256, chunkBytes, width, height } = record;
    await this.db.execute(INSERT, [id, owner, filename, contentType, size, sha256, chunkBytes, width ?? undefined, height ?? undefined]);
  }

  async byIds(ids: readonly string[]): Promise<AttachmentRecord[]> {
    if (ids.length === 0) return [];
    return (await this.db.execute(SELECT, [ids])).rows.map(toRecord);
  }

  /**
   * Attaches the upload to a message, if `owner` uploaded it and no message has it yet (an LWT). True when it is
   * attached to this message (by this call, or by an earlier try of the same post).
   */
  async attach(id: string, owner: string, roomName: string, messageId: string): Promise<boolean> {
    const outcome = await this.db.lwt(ATTACH, [roomName, messageId, id, owner], async () => {
      const row = await this.db.readSerial(SELECT_ATTACHED, [id]);
      return { applied: row?.message_id?.toString() === messageId, row };
    });
    if (outcome.applied) return true;
    return outcome.row?.message_id?.toString() === messageId;
  }

  async drop(id: string): Promise<void> {
    await this.db.execute(DROP, [id]);
  }

  /** Drops an upload's row unless a message has it (an LWT, ordered with attach): true when it is gone. */
  async dropIfUnattached(id: string): Promise<boolean> {
    const outcome = await this.db.lwt(DROP_IF_UNATTACHED, [id], async () => {
      const row = await this.db.readSerial(SELECT_ATTACHED, [id]);
      return { applied: !row, row };
    });
    return outcome.applied || !outcome.row;
  }
}
