/**
 * Editing and deleting room messages. Which accepted edit is the last one is
 * decided by the message's version: each edit is a lightweight transaction
 * from version v to v + 1 (see db/rooms/messages/message-edits.ts), so accepted edits
 * are totally ordered, the current content is the highest version's, and
 * every earlier version is in Message.edits exactly once. Events carry the
 * version: a client keeps the highest it has seen.
 */
import { recordAudit } from '../access/audit-log.js';
import type { Context } from '../../context.js';
import { commitHorizonMs } from '../model.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { VersionRow } from '../../../db/rooms/messages/message-edits.js';
import { newTimeUuid } from '../../../timeuuids.js';
import { encodeMessageId } from '../ids.js';
import { badInput, conflict, forbidden, notFound, LimitName, NotEditableReason, limitReached, notEditable } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { connection, decodeCursor, encodeCursor, type Connection } from '../../../pagination.js';
import { pageSize, validMetadata } from '../../../validation.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant } from '../access/access.js';
import { requireMay, requireMayRemoveMessageOf } from '../access/permissions.js';
import { messageWithRoom } from './messages.js';
import { mentionedParticipants, publishMentions } from './mentions.js';
import { validContent } from '../validation.js';
import { requireNotMuted } from '../moderation.js';
import { messageTerms } from './search-terms.js';
import type { ChatUser } from '../../../db/rooms/chat-user.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';
import { dropRowsWithContent, dropRowsWithoutContent } from './deletion.js';

/** What may not be edited, with the reason: deleted, hidden and system messages. */
function requireEditable(message: MessageRecord): void {
  if (message.systemMessage) throw notEditable(NotEditableReason.SYSTEM_MESSAGE);
  if (message.deleted) throw notEditable(NotEditableReason.DELETED);
  if (!message.visible) throw notEditable(NotEditableReason.HIDDEN);
}

function requireVersionLeft(message: MessageRecord): void {
  if (message.version >= Limits.room.edits.maxVersion) {
    throw limitReached(LimitName.EDITS_PER_MESSAGE, Limits.room.edits.maxVersion, `A message can be edited at most ${Limits.room.edits.maxVersion} times`);
  }
}

async function readMessage(ctx: Context, id: string): Promise<{ message: MessageRecord; room: RoomRecord }> {
  const { message, room } = await messageWithRoom(ctx, id);
  if (!message || !room) throw notFound('Message');
  return { message, room };
}

/**
 * The mention rows of an edited message: added for whom `after` mentions and `before` did not (its author
 * aside), removed for whom only `before` did. Returns who was newly mentioned. Writing them again is harmless.
 */
async function recordMentionChanges(ctx: Context, message: MessageRecord, before: ChatUser[], after: ChatUser[]): Promise<ChatUser[]> {
  const had = new Set(before.map((p) => p.login));
  const has = new Set(after.map((p) => p.login));
  const added = after.filter((p) => !had.has(p.login));
  const removed = [...had].filter((login) => !has.has(login));
  await ctx.services.stores.readState.updateMentions(message, added.map((p) => p.login).filter((l) => l !== message.author.login), removed);
  return added;
}

/**
 * The author (still a participant) replaces a message's content. With
 * expectedVersion, only from that version (CONFLICT otherwise); without it,
 * an edit that loses the race to another edit tries again from the new
 * version, a few times.
 *
 * An edit to the content the message already has makes no version: it
 * answers the message as it is, after writing its author's copy again. So a
 * retry of an edit that applied but whose copy failed (the client was told
 * SERVICE_UNAVAILABLE) finishes that edit rather than repeating it.
 */
export async function editMessage(
  ctx: Context,
  id: string,
  rawContent: string,
  expectedVersion: number | null | undefined,
  rawMetadata?: unknown,
): Promise<MessageRecord> {
  const viewer = requireViewer(ctx);
  const content = validContent('content', rawContent);
  // Left out: the metadata stays as it is; null: it goes.
  const newMetadata = rawMetadata === undefined ? undefined : validMetadata('metadata', rawMetadata);
  if (expectedVersion != null && (!Number.isInteger(expectedVersion) || expectedVersion < 0)) {
    throw badInput('expectedVersion', 'expectedVersion must be a version the message has had (0 or more)');
  }
  let { message, room } = await readMessage(ctx, id);
  // Whether it is deleted or hidden is for its author to learn: anyone else is refused first.
  if (message.systemMessage) throw notEditable(NotEditableReason.SYSTEM_MESSAGE);
  if (message.author.login !== viewer.login) throw forbidden('Only its author may edit a message');
  if (!isParticipant(room, viewer.login)) throw forbidden('Only participants of the room may do this');
  requireMay(room, viewer.login, 'POST', 'edit their messages');
  requireNotMuted(ctx, room, viewer.login);
  const { stores, clock, config, rooms } = ctx.services;
  const mentions = mentionedParticipants(room.participants, content);
  const terms = messageTerms(content, false);
  const horizonMs = commitHorizonMs(config.cassandra.requestTimeoutMs);
  for (let attempt = 0; attempt < Limits.room.edits.attempts; attempt++) {
    requireEditable(message);
    const metadata = newMetadata === undefined ? message.metadata : newMetadata;
    if (message.content === content && message.metadata === metadata) {
      if (message.version > 0) {
        // Perhaps a retry of this very edit, whose request applied it and then failed: its copy and its mention rows
        // are written again (the mentions of the version before say whose rows go).
        await stores.messageEdits.copyEdit(message, message.version, { content, editId: message.editId! }, horizonMs);
        const [before] = await stores.messageEdits.versions(message, message.version, 1);
        const mentionedBefore = before?.content == null ? [] : mentionedParticipants(room.participants, before.content);
        await recordMentionChanges(ctx, message, mentionedBefore, message.mentions);
      }
      return message;
    }
    requireVersionLeft(message);
    if (expectedVersion != null && message.version !== expectedVersion) {
      throw conflict(`The message is at version ${message.version}, not ${expectedVersion}: read it again before editing`);
    }
    const editId = newTimeUuid(clock.now()).toString();
    const turn = rooms.sequencer.take(room);
    let outcome;
    try {
      outcome = await stores.messageEdits.edit(message, { content, mentions, editId, terms, metadata }, horizonMs);
    } catch (err) {
      turn.cancel();
      throw err;
    }
    if (outcome.applied) {
      const edited: MessageRecord = { ...message, content, version: outcome.version, editId, mentions, metadata };
      // The edit stands once its LWT applied: the room hears of it whatever happens to the copy.
      await turn.publish([{ kind: 'MessageEdited', roomName: room.name, message: edited }]);
      await stores.messageEdits.copyEdit(message, outcome.version, { content, editId }, horizonMs);
      await publishMentions(ctx, edited, await recordMentionChanges(ctx, edited, message.mentions, mentions));
      return edited;
    }
    turn.cancel();
    if (outcome.deleted) throw notEditable(NotEditableReason.DELETED);
    if (outcome.hidden) throw notEditable(NotEditableReason.HIDDEN);
    const current = await stores.roomMessages.byKey(message.roomName, message.bucket, message.messageId);
    if (!current) throw notFound('Message');
    message = current;
  }
  throw conflict('The message kept changing while it was being edited; read it again and retry');
}

/**
 * Its author, or the room's creator as moderation, deletes a message. It
 * stays in history as a tombstone (deleted, no content) so pages and cursors
 * keep their places; its earlier versions, its author's copy and its
 * reactions go with its content. Deleting a deleted message returns the
 * tombstone, after dropping the copies again: a retry of a deletion whose
 * copies failed to go (the client was told SERVICE_UNAVAILABLE) finishes it.
 */
export async function deleteMessage(ctx: Context, id: string): Promise<MessageRecord> {
  const viewer = requireViewer(ctx);
  const { message, room } = await readMessage(ctx, id);
  const byAuthor = message.author.login === viewer.login && !message.systemMessage;
  if (!byAuthor) requireMayRemoveMessageOf(room, viewer.login, message.author.login, "delete someone else's message");
  const tombstone: MessageRecord = { ...message, content: null, deleted: true, mentions: [], metadata: null, forwardedFrom: null };
  const { stores, rooms } = ctx.services;
  if (message.deleted) {
    await dropRowsWithContent(ctx, room, message, tombstone);
    return tombstone;
  }
  const turn = rooms.sequencer.take(room);
  let deleted: boolean;
  try {
    deleted = await stores.messageEdits.delete(message);
  } catch (err) {
    turn.cancel();
    throw err;
  }
  if (!deleted) {
    // A deletion racing this one applied first; it drops the copies.
    turn.cancel();
    return tombstone;
  }
  await turn.publish([{ kind: 'MessageDeleted', roomName: room.name, message: tombstone }]);
  // An author deleting their own message moderates nothing: only someone else's deletion is audited.
  if (!byAuthor) await recordAudit(ctx, room, { action: 'MESSAGE_DELETED', target: message.author.login, details: encodeMessageId(message) });
  // The deletion stands (its LWT applied, the event is out): deletion.ts says what goes, and whose a failure is.
  await dropRowsWithoutContent(ctx, message);
  await dropRowsWithContent(ctx, room, message, tombstone);
  return tombstone;
}

/** A version of a message as served: its number, its content, and when it was made. */
export interface MessageVersion extends VersionRow {
  message: MessageRecord;
}

/** The custom data a version had, as a client reads it. */
export const versionMetadata = (v: MessageVersion): unknown => (v.metadata === null ? null : JSON.parse(v.metadata));

const encodeVersionCursor = (v: MessageVersion) => encodeCursor({ e: v.version });
const decodeVersionCursor = (field: string, cursor: string) =>
  decodeCursor(field, cursor, (p): p is { e: number } => Number.isInteger(p.e) && (p.e as number) >= 0).e;

/** The earlier versions of a message, newest first. None for a deleted or hidden message (its content is gone). */
export async function editsOf(
  ctx: Context,
  message: MessageRecord,
  first: number | null | undefined,
  after: string | null | undefined,
): Promise<Connection<MessageVersion>> {
  const size = pageSize('first', first);
  const below = after ? Math.min(decodeVersionCursor('after', after), message.version) : message.version;
  // A deleted or hidden message's earlier versions are gone from view with its content.
  if (message.deleted || !message.visible || below <= 0) return connection([], encodeVersionCursor, { hasNextPage: false });
  const rows = await ctx.services.stores.messageEdits.versions(message, below, size + 1);
  const versions = rows.slice(0, size).map((row) => ({ ...row, message }));
  return connection(versions, encodeVersionCursor, { hasNextPage: rows.length > size });
}
