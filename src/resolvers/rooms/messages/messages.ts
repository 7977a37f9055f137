/**
 * Reading chat messages: history pages in both directions, one message by id,
 * hiding, and a user's own messages across rooms. (Posting is in posting.ts.)
 */
import { recordAudit, validReason } from '../access/audit-log.js';
import type { Context } from '../../context.js';
import { chatUser } from '../model.js';
import { catchUpFrom, messageCursor, settledHorizon } from '../live/message-cursors.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { UserRecord } from '../../../db/accounts/users.js';
import { timeUuidDate } from '../../../timeuuids.js';
import { monthOfDay } from '../../../buckets.js';
import { badInput, forbidden, notFound } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { connection, decodeHistoryCursor, encodeHistoryCursor, type Connection, type HistoryPosition } from '../../../pagination.js';
import { pageSize } from '../../../validation.js';
import { requireViewer } from '../../shared/guards.js';
import { eachVisibleOrNull } from '../../shared/nodes.js';
import { decodeMessageId, encodeMessageId } from '../ids.js';
import { isParticipant, visibleTo } from '../access/access.js';
import { requireMayRemoveMessageOf } from '../access/permissions.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';
import { messageLoader, roomLoader, roomMessageKey } from '../reads.js';
import { userLoader } from '../../accounts/reads.js';

export interface HistoryArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/**
 * A page of a room's history, for its participants.
 * - first/after: newest first, walking back in time (hasNextPage: older ones exist).
 * - last/before: the messages newer than `before` (or the oldest of the room
 *   without it), oldest first, so a client that reconnects fetches exactly
 *   what it missed; continue with before = endCursor (hasPreviousPage: newer ones exist).
 */
export async function roomHistory(ctx: Context, room: RoomRecord, args: HistoryArgs): Promise<Connection<MessageRecord>> {
  const viewer = requireViewer(ctx);
  if (!isParticipant(room, viewer.login)) throw forbidden('Only participants read the messages of a room');
  const backwards = args.last != null || args.before != null;
  if (backwards && (args.first != null || args.after != null)) {
    throw badInput(args.first != null ? 'first' : 'after', 'Use first/after (older messages) or last/before (newer ones), not both');
  }
  const cursorField = backwards ? 'before' : 'after';
  const cursor = backwards ? args.before : args.after;
  const size = pageSize(backwards ? 'last' : 'first', backwards ? args.last : args.first);
  let from: HistoryPosition | null = cursor ? decodeHistoryCursor(cursorField, cursor, 'day') : null;
  const { clock, stores } = ctx.services;
  // Catch-up shows messages up to now, though the latest have not settled (message-cursors.ts): a reconnecting
  // client wants the latest. Their cursors remember the horizon, and catching up from one starts there.
  // Newest-first pages work the same way for their top cursors.
  const settledUpTo = settledHorizon(ctx.services);
  if (backwards && from) from = catchUpFrom(from);
  // Catch-up reads up to now, allowing for instances whose clocks run a little ahead.
  const readUpTo = new Date(clock.now().getTime() + Limits.room.clockSkewMs);

  // A cursor older than this room (an earlier room of the same name): nothing of it belongs here.
  if (from && timeUuidDate(from.id) < room.createdAt) {
    if (!backwards) return connection([], () => '', { hasNextPage: false });
    from = null;
  }
  const page = await stores.roomMessages.page(room, backwards ? 'newer' : 'older', from, size, readUpTo);
  const cursorOf = (m: MessageRecord) => messageCursor(m, settledUpTo);
  return backwards
    ? connection(page.rows, cursorOf, { hasNextPage: false, hasPreviousPage: page.more })
    : connection(page.rows, cursorOf, { hasNextPage: page.more });
}

/**
 * A message and its room, both read at once. Neither when the room is hidden from the viewer (access.ts: it is one
 * that does not exist, to them; its messages with it, their own too). No message when either is gone, or when the
 * message belongs to an earlier room of the same name.
 */
export async function messageWithRoom(ctx: Context, id: string, field = 'messageId'): Promise<{ message?: MessageRecord; room?: RoomRecord }> {
  const key = decodeMessageId(field, id);
  const { stores } = ctx.services;
  const [message, room] = await Promise.all([
    stores.roomMessages.byKey(key.roomName, key.bucket, key.messageId),
    stores.rooms.byName(key.roomName),
  ]);
  return inItsRoom(message ?? null, visibleTo(ctx, room));
}

/** Whether a message belongs to this room, not to an earlier room of the same name. */
const ofThisRoom = (message: MessageRecord, room: RoomRecord) => timeUuidDate(message.messageId) >= room.createdAt;

/** Who reads a room message, by every way to it: the room's participants, and its author wherever they are. */
const mayRead = (login: string, message: MessageRecord, room: RoomRecord) => isParticipant(room, login) || message.author.login === login;

/** A message read beside its room, as messageWithRoom answers: no message when either is gone or they do not belong together. */
function inItsRoom(message: MessageRecord | null, room: RoomRecord | null): { message?: MessageRecord; room?: RoomRecord } {
  if (!message || !room || !ofThisRoom(message, room)) return { room: room ?? undefined };
  return { message, room };
}

/** The message for `login`, by mayRead (FORBIDDEN for anyone else); null when it does not exist (any more). */
function readableBy(login: string, { message, room }: { message?: MessageRecord; room?: RoomRecord }): MessageRecord | null {
  if (!message || !room) return null;
  if (!mayRead(login, message, room)) throw forbidden('Only participants read the messages of a room');
  return message;
}

/** One message by id: for the room's participants and for its author. Null when it does not exist (any more). */
export async function messageById(ctx: Context, id: string): Promise<MessageRecord | null> {
  const viewer = requireViewer(ctx);
  return readableBy(viewer.login, await messageWithRoom(ctx, id));
}

/**
 * node(id:)'s room messages: their room's participants and their author, as with message(messageId:). Read
 * through the request's loaders: the messages of one room and day in one read, their rooms in one.
 */
export function messageNodes(ctx: Context, ids: readonly string[]): Array<Promise<MessageRecord | null>> {
  return eachVisibleOrNull(ids, async (id) => {
    const viewer = requireViewer(ctx);
    // The id holds the message's day, which the loader works out again from the timeuuid (decodeMessageId checks they agree).
    const key = decodeMessageId('messageId', id);
    const [message, room] = await Promise.all([messageLoader(ctx).load(roomMessageKey(key.roomName, key.messageId)), roomLoader(ctx).load(key.roomName)]);
    return readableBy(viewer.login, inItsRoom(message, visibleTo(ctx, room)));
  });
}

/** The author or the room's creator hides a message: its content is then null for everyone. */
export async function hideMessage(ctx: Context, id: string, rawReason?: string | null): Promise<MessageRecord> {
  const reason = validReason(rawReason);
  const viewer = requireViewer(ctx);
  const { stores } = ctx.services;
  const { message, room } = await messageWithRoom(ctx, id);
  if (!message || !room) throw notFound('Message');
  if (message.author.login !== viewer.login) requireMayRemoveMessageOf(room, viewer.login, message.author.login, "hide someone else's message");
  if (!message.visible) return message;
  const hidden: MessageRecord = { ...message, visible: false };
  const turn = ctx.services.rooms.sequencer.take(room);
  try {
    await stores.roomMessages.hide(message);
  } catch (err) {
    turn.cancel();
    throw err;
  }
  // The event never carries the hidden text.
  await turn.publish([{ kind: 'MessageHidden', roomName: room.name, message: { ...hidden, content: null } }]);
  // An author hiding their own message moderates nothing: only someone else's is audited.
  if (message.author.login !== viewer.login) await recordAudit(ctx, room, { action: 'MESSAGE_HIDDEN', target: message.author.login, reason, details: encodeMessageId(message) });
  // A hidden message is not unread, so its mentions go too. A failure is logged: the read state counts a mention
  // only when its message counts as unread, so a row left behind is not counted either.
  await stores.readState.updateMentions(message, [], message.mentions.map((p) => p.login)).catch((err) =>
    ctx.services.logger.warn({ err, roomName: room.name }, "a hidden message's mentions were not dropped"),
  );
  return hidden;
}

/**
 * The logged-in user's own messages across rooms, newest first (null for anyone else's profile). The author's
 * copies (messages_by_author) say which messages and in what order; each is served as the room message itself,
 * read from the room's rows through the request's loaders (one read per room and day, the rooms in one), so a
 * message has one shape under its id whichever way it is read. A copy whose message or room is gone, or belongs
 * to an earlier room of the same name, shows nothing: a page may hold fewer than `first` messages, and its
 * endCursor still moves past them.
 */
export async function messagesOf(
  ctx: Context,
  user: UserRecord,
  first: number | null | undefined,
  after: string | null | undefined,
): Promise<Connection<MessageRecord> | null> {
  const viewer = requireViewer(ctx);
  if (viewer.login !== user.login) return null;
  const size = pageSize('first', first);
  const from = after ? decodeHistoryCursor('after', after, 'month') : null;
  const me = await userLoader(ctx).load(viewer.login);
  const author = chatUser(me ?? { login: viewer.login, firstname: '', lastname: '' });
  const page = await ctx.services.stores.messagesByAuthor.page(author, from, size);
  const cursorOf = (m: MessageRecord) =>
    encodeHistoryCursor({ bucket: monthOfDay(m.bucket), id: m.messageId });
  const lastCopy = page.rows.at(-1);
  return connection(await roomMessagesOf(ctx, viewer.login, page.rows), cursorOf, {
    hasNextPage: page.more,
    endCursor: lastCopy ? cursorOf(lastCopy) : undefined,
  });
}

/** The room messages `login`'s copies point at, in their order, each as message(messageId:) serves it to them. */
async function roomMessagesOf(ctx: Context, login: string, copies: MessageRecord[]): Promise<MessageRecord[]> {
    const [messages, rooms] = await Promise.all([
    Promise.all(copies.map((c) => messageLoader(ctx).load(roomMessageKey(c.roomName, c.messageId)))),
    Promise.all([...new Set(copies.map((c) => c.roomName))].map((name) => roomLoader(ctx).load(name))),
  ]);
  const roomsByName = new Map(rooms.flatMap((room) => (visibleTo(ctx, room) ? [[room!.name, room!] as const] : [])));
  return messages.filter((message): message is MessageRecord => {
    const room = message && roomsByName.get(message.roomName);
    return !!room && ofThisRoom(message, room) && mayRead(login, message, room);
  });
}

/** When a message was posted: the time of its id. */
export const messageCreatedAt = (m: MessageRecord) => timeUuidDate(m.messageId);

/** When the current version was written: the time of the edit that made it (null when never edited). */
export const editedAt = (m: MessageRecord) => (m.editId ? timeUuidDate(m.editId) : null);

/** When a version was written: its edit's time, or the post's for version 0 (no edit). */
export const messageVersionAt = (m: MessageRecord, editId: string | null) => timeUuidDate(editId ?? m.messageId);

/** What clients see of a message's text: nothing once it is hidden. */
export const visibleContent = (m: MessageRecord) => (m.visible && !m.deleted ? m.content : null);

/** Its custom data as a client reads it: none once hidden or deleted, as its content. */
export const visibleMetadata = (m: MessageRecord): unknown => (m.visible && !m.deleted && m.metadata !== null ? JSON.parse(m.metadata) : null);
