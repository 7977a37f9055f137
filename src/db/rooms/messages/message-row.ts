/**
 * A room message as stored in chat_room_messages, and how a row maps to it.
 * JSON-safe (ids are timeuuid strings, times ISO strings), because the same
 * record travels in room events through pub/sub.
 */
import type { Row } from '../../cassandra/client.js';
import { fromUdt, type ChatUser } from '../chat-user.js';

export interface MessageRecord {
  roomName: string;
  /** Day bucket (yyyyMMdd) of the room partition holding it. */
  bucket: number;
  messageId: string;
  author: ChatUser;
  /** As stored; the API shows null when the message is hidden. Null once deleted. */
  content: string | null;
  systemMessage: boolean;
  visible: boolean;
  /** 0 as posted, one more per accepted edit. */
  version: number;
  /** The edit that made the current version (its time is editedAt); null when never edited. */
  editId: string | null;
  /** Deleted by its author or the room's creator: a tombstone that keeps its place in history. */
  deleted: boolean;
  /** For a reply, its parent's message id (same room). */
  replyTo: string | null;
  /** For a parent, when its thread last got a reply (ISO). */
  lastReplyAt: string | null;
  /** The participants its content mentions. */
  mentions: ChatUser[];
  /** Every reaction emoji it has been given (kept when their count falls to 0). */
  reactionKinds: string[];
  /** The poll it carries (its question is the content), fixed when posted; null for a plain message. */
  poll: PollDefinition | null;
  /** For a forwarded message, the id (as the API gives it) of the room message it copies. */
  forwardedFrom: string | null;
  /** Custom data (JSON text of an object, at most Limits.metadata.maxBytes); null when none, and once deleted. */
  metadata: string | null;
  /** The ids of the files it carries, in order (kept on a deleted message until its files are dropped; never shown). */
  attachments: string[];
  /**
   * Its search terms, only on a message about to be written (its insert
   * indexes them). Reads leave them out: nothing serves them.
   */
  terms?: string[];
}

/** A poll as posted: its answers, whether a voter may pick several, and when voting ends (ISO; null: never). */
export interface PollDefinition {
  answers: string[];
  multipleChoice: boolean;
  closesAt: string | null;
}

/** The parts of a message a post decides; the rest start empty. */
export type NewMessageRecord = Pick<MessageRecord, 'roomName' | 'bucket' | 'messageId' | 'author' | 'content' | 'systemMessage'> &
  Partial<Pick<MessageRecord, 'replyTo' | 'mentions' | 'terms' | 'poll' | 'forwardedFrom' | 'metadata' | 'attachments'>>;

/** A message as it is right after its post: visible, unedited, unreacted, without replies. */
export function postedMessage(fields: NewMessageRecord): MessageRecord {
  return {
    visible: true,
    version: 0,
    editId: null,
    deleted: false,
    replyTo: null,
    lastReplyAt: null,
    mentions: [],
    reactionKinds: [],
    poll: null,
    forwardedFrom: null,
    metadata: null,
    attachments: [],
    ...fields,
  };
}

export const MESSAGE_COLUMNS =
  'room_name, time_bucket, message_id, content, author, system_message, visible, version, edit_id, deleted, ' +
  'reply_to, last_reply_at, mentions, reaction_kinds, poll, forwarded_from, metadata, attachments';

export function toMessage(row: Row): MessageRecord | undefined {
  // An UPDATE (hide, edit, reply count) racing a deletion can leave a row without its insert's columns: skip it.
  if (!row.author) return undefined;
  return {
    roomName: row.room_name,
    bucket: row.time_bucket,
    messageId: row.message_id.toString(),
    author: fromUdt(row.author),
    content: row.deleted ? null : (row.content ?? null),
    systemMessage: Boolean(row.system_message),
    visible: row.visible !== false,
    version: row.version ?? 0,
    editId: row.edit_id?.toString() ?? null,
    deleted: row.deleted === true,
    replyTo: row.reply_to?.toString() ?? null,
    lastReplyAt: row.last_reply_at ? (row.last_reply_at as Date).toISOString() : null,
    mentions: ((row.mentions ?? []) as unknown[]).map(fromUdt),
    reactionKinds: [...((row.reaction_kinds as Set<string> | null) ?? [])],
    poll: row.poll ? (JSON.parse(row.poll as string) as PollDefinition) : null,
    forwardedFrom: (row.forwarded_from as string | null) ?? null,
    metadata: row.deleted ? null : ((row.metadata as string | null) ?? null),
    // Kept on a tombstone, so a retried deletion still finds the files it must drop (the API shows none).
    attachments: ((row.attachments as Array<{ toString(): string }> | null) ?? []).map(String),
  };
}
