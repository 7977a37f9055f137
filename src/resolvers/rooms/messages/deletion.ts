/**
 * What deleting a room message does, column by column and row by row, in one list: each column of
 * chat_room_messages says here what its deletion does (test/rooms/messages/deletion-cleanup.test.ts reads cql/ and
 * fails on a column that does not), and each row that hangs off a message is dropped by one step below.
 */
import type { Context } from '../../context.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';
import { commitHorizonMs } from '../model.js';
import { dropAttachments } from './attachments.js';
import { unpinDeleted } from './pins.js';

/**
 * Each column of chat_room_messages, and what a deletion does to it. "Nulled" columns are set null by the deletion's
 * LWT itself (db/rooms/messages/message-edits.ts, DELETE); the test checks that statement nulls each of them.
 */
export const DELETION_OF_COLUMN: Readonly<Record<string, string>> = {
  room_name: 'kept: the key',
  time_bucket: 'kept: the key',
  message_id: 'kept: the key (the tombstone keeps its place in history)',
  content: 'nulled',
  author: 'kept: the tombstone shows whose message was deleted',
  system_message: 'kept',
  visible: 'kept',
  version: 'kept: the deletion is conditioned on it, and later edits fail on `deleted`',
  edit_id: 'kept: the last edit, whose version row is dropped with the author copies',
  deleted: 'set true',
  reply_to: 'kept: a deleted reply stays in its thread',
  last_reply_at: 'kept: the replies stay',
  mentions: 'nulled; the mention rows go (dropRowsWithoutContent)',
  reaction_kinds: 'kept; the reaction rows go (dropRowsWithoutContent), so it counts none',
  poll: 'kept: it shows the deleted message was a poll; its votes go (dropRowsWithoutContent)',
  forwarded_from: 'nulled',
  metadata: 'nulled',
  attachments: 'kept; the files go (dropRowsWithContent), so it lists none',
  terms: 'nulled: search no longer finds it',
};

/**
 * The rows off a deleted message that hold no content: its reactions, its mention rows, its poll's votes. A failure
 * is logged, not the caller's: the deletion stands, and nothing readable is left behind.
 */
export async function dropRowsWithoutContent(ctx: Context, message: MessageRecord): Promise<void> {
  const { stores, logger } = ctx.services;
  try {
    await stores.reactions.dropAll(message);
    await stores.readState.updateMentions(message, [], message.mentions.map((p) => p.login));
    if (message.poll) await stores.pollVotes.drop(message.roomName, message.messageId);
  } catch (err) {
    logger.warn({ err, roomName: message.roomName }, "a deleted message's reactions, mentions or votes were not dropped");
  }
}

/**
 * The rows off a deleted message that hold its content: the author's copies and edit versions, its files, its pin.
 * A failure is the caller's, whose retry (a deletion of a deleted message) drops them.
 */
export async function dropRowsWithContent(ctx: Context, room: RoomRecord, message: MessageRecord, tombstone: MessageRecord): Promise<void> {
  await ctx.services.stores.messageEdits.dropCopies(message, commitHorizonMs(ctx.services.config.cassandra.requestTimeoutMs));
  await dropAttachments(ctx, message);
  await unpinDeleted(ctx, room, tombstone);
}
