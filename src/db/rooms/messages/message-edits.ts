/**
 * Edits and deletion of a room message. Both are lightweight transactions on
 * the message's row, so Paxos puts them in one order: an edit of version v
 * applies only IF version = v AND deleted = null (its new version is v + 1),
 * a deletion only IF deleted = null. Both also ask the row to be visible (an
 * edit) and to hold its post's columns (system_message != null): an edit
 * racing a hide never rewrites hidden content, and neither ever writes a row
 * of leftovers into a room deleted meanwhile. So the version number decides which
 * accepted edit is the last one, and an edit racing a deletion never brings
 * the content back. The earlier versions live in message_versions; the
 * author's copy (messages_by_author) follows with write timestamps that grow
 * with the version.
 */
import { cql, Long, type Database, type Row } from '../../cassandra/client.js';
import { timeUuidDate } from '../../../timeuuids.js';
import { monthOfDay } from '../../../buckets.js';
import { Limits } from '../../../limits.js';
import type { ChatUser } from '../chat-user.js';
import type { MessageRecord } from './message-row.js';

// Version rows and the author's copy are written at copyTimestamp(message, version) and dropped at one above
// every version: a version row written late by an edit racing the deletion is shadowed as well.
const SAVE_VERSION = cql(
  `INSERT INTO message_versions (room_name, time_bucket, message_id, version, content, edit_id, metadata)
   VALUES (?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?`,
  { idempotent: true },
);
// The terms change with the content in the same LWT, so the index always finds a message by its current version.
const EDIT = cql(
  `UPDATE chat_room_messages SET content = ?, version = ?, edit_id = ?, mentions = ?, terms = ?, metadata = ?
   WHERE room_name = ? AND time_bucket = ? AND message_id = ?
   IF version = ? AND deleted = null AND visible = null AND system_message != null`,
  { idempotent: false },
);
const DELETE = cql(
  `UPDATE chat_room_messages SET deleted = true, content = null, mentions = null, terms = null, metadata = null, forwarded_from = null
   WHERE room_name = ? AND time_bucket = ? AND message_id = ? IF deleted = null AND system_message != null`,
  { idempotent: false },
);
const SELECT_STATE = cql(
  'SELECT version, edit_id, deleted FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?',
  { idempotent: true },
);
const VERSION_EDIT = cql(
  'SELECT edit_id FROM message_versions WHERE room_name = ? AND time_bucket = ? AND message_id = ? AND version = ?',
  { idempotent: true },
);
const VERSIONS_BELOW = cql(
  `SELECT version, content, edit_id, metadata FROM message_versions
   WHERE room_name = ? AND time_bucket = ? AND message_id = ? AND version < ? LIMIT ?`,
  { idempotent: true },
);
const DROP_VERSIONS = cql(
  'DELETE FROM message_versions USING TIMESTAMP ? WHERE room_name = ? AND time_bucket = ? AND message_id = ?',
  { idempotent: true },
);
const COPY_EDIT = cql(
  `UPDATE messages_by_author USING TIMESTAMP ? SET content = ?, version = ?, edit_id = ?
   WHERE author_login = ? AND time_bucket = ? AND message_id = ?`,
  { idempotent: true },
);
const COPY_DELETE = cql(
  `UPDATE messages_by_author USING TIMESTAMP ? SET content = null, deleted = true
   WHERE author_login = ? AND time_bucket = ? AND message_id = ?`,
  { idempotent: true },
);

/** An earlier version of a message. */
export interface VersionRow {
  version: number;
  content: string | null;
  /** The edit that made this version; null for version 0 (the post). */
  editId: string | null;
  /** The custom data this version had (JSON text), null when none. */
  metadata: string | null;
}

export interface EditProposal {
  content: string;
  mentions: ChatUser[];
  /** The new content's search terms (empty: none, the old ones are dropped all the same). */
  terms: string[];
  /** The custom data the new version has (JSON text), null for none. */
  metadata: string | null;
  /** A fresh timeuuid: identifies this edit and gives its time. */
  editId: string;
}

export type EditOutcome =
  | { applied: true; version: number }
  /** deleted: deleted, or gone with its room; hidden: hidden meanwhile. */
  | { applied: false; deleted: boolean; hidden: boolean; version: number };

const key = (m: MessageRecord) => [m.roomName, m.bucket, m.messageId];

export class MessageEditStore {
  constructor(private readonly db: Database) {}

  /**
   * Proposes `edit` as version `current.version + 1`. First saves the current
   * version in message_versions (every edit racing from the same version
   * writes the same row), then runs the LWT. After an unknown outcome, the
   * edit applied if the row (read at SERIAL) or the next version row names it.
   * The author's copy follows, with copyEdit.
   *
   * commitHorizonMs: how far past its id's time a message's first write may
   * land (see resolvers/rooms/model.ts). Version rows and the author's copy of
   * an edit are written at timestamps beyond it, so they always win over the
   * post's own write.
   */
  async edit(current: MessageRecord, edit: EditProposal, commitHorizonMs: number): Promise<EditOutcome> {
    const v = current.version;
    const savedAt = copyTimestamp(current, v, commitHorizonMs);
    await this.db.execute(SAVE_VERSION, [...key(current), v, current.content, current.editId ?? undefined, current.metadata ?? undefined, savedAt]);
    const outcome = await this.db.lwt(
      EDIT,
      [edit.content, v + 1, edit.editId, edit.mentions, edit.terms.length > 0 ? edit.terms : null, edit.metadata, ...key(current), v === 0 ? null : v],
      async () => {
        const row = await this.db.readSerial(SELECT_STATE, key(current));
        if (row?.edit_id?.toString() === edit.editId) return { applied: true, row };
        if ((row?.version ?? 0) > v + 1) {
          const next = await this.db.first(VERSION_EDIT, [...key(current), v + 1]);
          return { applied: next?.edit_id?.toString() === edit.editId, row };
        }
        // Another edit or the deletion won meanwhile: the version it expects is gone for good.
        return { applied: false, row, settled: row !== undefined && (row.deleted === true || (row.version ?? 0) !== v) };
      },
    );
    if (outcome.applied) return { applied: true, version: v + 1 };
    const row: Row | undefined = outcome.row;
    const gone = !row || row.deleted === true || ('system_message' in row && row.system_message == null);
    return { applied: false, deleted: gone, hidden: row?.visible === false, version: row?.version ?? 0 };
  }

  /**
   * Marks the message deleted (content gone); false when it already was.
   * Its versions and author's copy go after, with dropCopies.
   */
  async delete(message: MessageRecord): Promise<boolean> {
    const outcome = await this.db.lwt(DELETE, key(message), async () => {
      // Deleted either way: by this call or by one racing it, which is the same to the caller.
      const row = await this.db.readSerial(SELECT_STATE, key(message));
      return { applied: row?.deleted === true, row };
    });
    return outcome.applied;
  }

  /**
   * The content a deleted message leaves elsewhere: its earlier versions and
   * its author's copy. Written at one fixed timestamp above every version, so
   * running it again (a retried deletion) changes nothing more, and a copy
   * written late by an edit that raced the deletion is shadowed all the same.
   */
  async dropCopies(message: MessageRecord, commitHorizonMs: number): Promise<void> {
    const gone = copyTimestamp(message, Limits.room.edits.maxVersion + 1, commitHorizonMs);
    await this.db.execute(DROP_VERSIONS, [gone, ...key(message)]);
    if (!message.systemMessage) await this.db.execute(COPY_DELETE, [gone, ...authorKey(message)]);
  }

  /** Versions below `below`, newest first, from `below - 1` down; `limit` of them at most. */
  async versions(message: MessageRecord, below: number, limit: number): Promise<VersionRow[]> {
    const rs = await this.db.execute(VERSIONS_BELOW, [...key(message), below, limit]);
    return rs.rows.map((r) => ({ version: r.version, content: r.content ?? null, editId: r.edit_id?.toString() ?? null, metadata: r.metadata ?? null }));
  }

  /**
   * The author's copy of version `version` (made by `edit`), written after its
   * LWT applied. Its timestamp grows with the version, so writing it again
   * (a retried edit finishing the copy) never overwrites a later version.
   */
  async copyEdit(message: MessageRecord, version: number, edit: { content: string; editId: string }, commitHorizonMs: number): Promise<void> {
    if (message.systemMessage) return;
    const at = copyTimestamp(message, version, commitHorizonMs);
    await this.db.execute(COPY_EDIT, [at, edit.content, version, edit.editId, ...authorKey(message)]);
  }
}

/**
 * Past the post's commit horizon, plus the version: later versions (and the deletion) always win. Also what
 * a deleted room's cleanup must reach for a message's versions (see RoomMessageStore.dropRoom).
 */
export function copyTimestamp(message: Pick<MessageRecord, 'messageId'>, version: number, commitHorizonMs: number) {
  const base = timeUuidDate(message.messageId).getTime() + commitHorizonMs;
  return Long.fromNumber(base).multiply(1000).add(version);
}

const authorKey = (m: MessageRecord) => [m.author.login, monthOfDay(m.bucket), m.messageId];
