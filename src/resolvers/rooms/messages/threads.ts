/**
 * Threads, one level deep as in Slack: a reply is a room message that names
 * its parent (postMessage's replyTo). Replies show in the room's history and
 * feed like any message, marked with their parent (Message.replyTo), and in
 * their parent's thread (Message.replies, oldest first).
 */
import type { Context } from '../../context.js';

import type { RoomHead } from '../../../db/rooms/rooms.js';
import { isTimeUuid, timeUuidDate } from '../../../timeuuids.js';
import { badInput, forbidden } from '../../../errors.js';
import { connection, decodeCursor, encodeCursor, type Connection } from '../../../pagination.js';
import { pageSize } from '../../../validation.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant } from '../access/access.js';
import { decodeMessageId } from '../ids.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';
import { messageLoader, roomLoader, roomMessageKey } from '../reads.js';

/** The message a reply in `room` may go under: one of the room's, not deleted, not a system message, not a reply. */
export async function requireThreadParent(ctx: Context, room: RoomHead, field: string, id: string): Promise<MessageRecord> {
  const key = decodeMessageId(field, id);
  if (key.roomName !== room.name) throw badInput(field, `${field} must be a message of the same room`);
  const parent = await ctx.services.stores.roomMessages.byKey(key.roomName, key.bucket, key.messageId);
  if (!parent || timeUuidDate(parent.messageId) < room.createdAt) throw badInput(field, `${field} names no message of this room`);
  if (parent.deleted) throw badInput(field, 'That message was deleted: its thread takes no new replies');
  if (parent.systemMessage) throw badInput(field, 'System messages have no thread');
  if (parent.replyTo) throw badInput(field, "Threads are one level deep: reply to the thread's first message");
  return parent;
}

/** Reading a thread is for the room's participants (an author who left keeps their message, not the room). */
async function requireRoomReader(ctx: Context, message: MessageRecord): Promise<void> {
  const viewer = requireViewer(ctx);
  const room = await roomLoader(ctx).load(message.roomName);
  if (!room || !isParticipant(room, viewer.login)) throw forbidden('Only participants read the threads of a room');
}

const encodeReplyCursor = (m: MessageRecord) => encodeCursor({ t: m.messageId });
const decodeReplyCursor = (field: string, cursor: string) =>
  decodeCursor(field, cursor, (p): p is { t: string } => isTimeUuid(p.t)).t.toLowerCase();

/** A page of a message's thread, oldest first. Empty for a message without replies, without a query. */
export async function repliesOf(
  ctx: Context,
  message: MessageRecord,
  first: number | null | undefined,
  after: string | null | undefined,
): Promise<Connection<MessageRecord>> {
  const size = pageSize('first', first);
  const from = after ? decodeReplyCursor('after', after) : null;
  await requireRoomReader(ctx, message);
  if (!message.lastReplyAt) return connection([], encodeReplyCursor, { hasNextPage: false });
  const page = await ctx.services.stores.threads.page(message, from, size);
  return connection(page.rows, encodeReplyCursor, { hasNextPage: page.more });
}

/** How many replies the thread has: 0 without a query when it has none. */
export async function replyCountOf(ctx: Context, message: MessageRecord): Promise<number> {
  if (!message.lastReplyAt) return 0;
  return ctx.services.stores.threads.count(message);
}

/** The message a reply answers (null for a message that is not a reply, or whose parent is gone). */
export async function parentOf(ctx: Context, message: MessageRecord): Promise<MessageRecord | null> {
  if (!message.replyTo) return null;
  return messageLoader(ctx).load(roomMessageKey(message.roomName, message.replyTo));
}
