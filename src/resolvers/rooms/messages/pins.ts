/**
 * Pinned messages: the room's owner pins up to Limits.room.maxPins of its
 * messages; Room.pinnedMessages lists them in pin order (first pinned first).
 * Deleting a message unpins it.
 */
import type { Context } from '../../context.js';

import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { PinChange } from '../../../db/rooms/messages/pins.js';
import { timeUuidDate } from '../../../timeuuids.js';
import { AppError, ErrorCode, badInput, conflict, forbidden, notFound, unavailable, LimitName, limitReached } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant, requireRoom } from '../access/access.js';
import { requireMay } from '../access/permissions.js';
import { messageWithRoom } from './messages.js';
import { recordAudit } from '../access/audit-log.js';
import { encodeMessageId } from '../ids.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';

async function creatorsMessage(ctx: Context, id: string): Promise<{ message: MessageRecord; room: RoomRecord }> {
  const viewer = requireViewer(ctx);
  const { message, room } = await messageWithRoom(ctx, id);
  if (!message || !room) throw notFound('Message');
  requireMay(room, viewer.login, 'PIN', 'pin and unpin messages');
  return { message, room };
}

/**
 * Changes the room's pins as `change` says, in the room's event order, and
 * publishes `kind` when they changed.
 */
async function changePins(
  ctx: Context,
  room: RoomRecord,
  message: MessageRecord,
  kind: 'MessagePinned' | 'MessageUnpinned',
  change: PinChange,
  /** A pin or an unpin of the viewer's, for the audit log; not the unpin that follows a deletion. */
  audited = true,
): Promise<MessageRecord> {
  const turn = ctx.services.rooms.sequencer.take(room);
  let outcome;
  try {
    outcome = await ctx.services.stores.pins.change(room, change, Limits.room.pinAttempts);
  } catch (err) {
    turn.cancel();
    throw err;
  }
  if (outcome.status !== 'changed') turn.cancel();
  if (outcome.status === 'gone') throw notFound('Room');
  if (outcome.status === 'deposed') {
    // A transfer, a promotion or a demotion came first: judged again on the room as it is now.
    requireMay(await requireRoom(ctx, room.name), requireViewer(ctx).login, 'PIN', 'pin and unpin messages');
    throw conflict("The room's roles changed meanwhile; try again");
  }
  if (outcome.status === 'contended') throw conflict('The pins kept changing; try again');
  if (outcome.status === 'full') throw limitReached(LimitName.PINS_PER_ROOM, Limits.room.maxPins, `A room holds at most ${Limits.room.maxPins} pinned messages: unpin one first`);
  if (outcome.status === 'changed') {
    await turn.publish([{ kind, roomName: room.name, message }]);
    const action = kind === 'MessagePinned' ? 'MESSAGE_PINNED' : 'MESSAGE_UNPINNED';
    if (audited) await recordAudit(ctx, room, { action, target: message.author.login, details: encodeMessageId(message) });
  }
  return message;
}

/** Pins a message (pinning it again changes nothing). */
export async function pinMessage(ctx: Context, id: string): Promise<MessageRecord> {
  const { message, room } = await creatorsMessage(ctx, id);
  if (message.deleted) throw badInput('messageId', 'The message was deleted: it cannot be pinned');
  return changePins(ctx, room, message, 'MessagePinned', (pins) => {
    if (pins.includes(message.messageId)) return 'unchanged';
    return pins.length >= Limits.room.maxPins ? 'full' : [...pins, message.messageId];
  });
}

/** Unpins a message (unpinning one that is not pinned changes nothing). */
export async function unpinMessage(ctx: Context, id: string): Promise<MessageRecord> {
  const { message, room } = await creatorsMessage(ctx, id);
  return unpin(ctx, room, message);
}

/** Takes `message` off the room's pins, publishing MessageUnpinned when it was there. */
function unpin(ctx: Context, room: RoomRecord, message: MessageRecord, audited = true): Promise<MessageRecord> {
  return changePins(
    ctx,
    room,
    message,
    'MessageUnpinned',
    (pins) => (pins.includes(message.messageId) ? pins.filter((p) => p !== message.messageId) : 'unchanged'),
    audited,
  );
}

/**
 * A deleted message leaves the pins. A plain read first, so that deleting a message never pinned costs no Paxos
 * round. The deletion stands already: a failure here is SERVICE_UNAVAILABLE (never CONFLICT, which says nothing
 * changed), and the deletion's retry takes the pin off; a room gone meanwhile has no pins to take it off.
 */
export async function unpinDeleted(ctx: Context, room: RoomRecord, tombstone: MessageRecord): Promise<void> {
  try {
    if (!(await ctx.services.stores.pins.pins(room.name)).includes(tombstone.messageId)) return;
    await unpin(ctx, room, tombstone, false);
  } catch (err) {
    if (err instanceof AppError && err.code === ErrorCode.NOT_FOUND) return;
    if (err instanceof AppError && err.code === ErrorCode.SERVICE_UNAVAILABLE) throw err;
    ctx.services.logger.warn({ err, roomName: room.name }, "a deleted message's pin was not taken off");
    throw unavailable('storage');
  }
}

/**
 * The room's pinned messages in pin order, for its participants: one read of
 * the pin list, then one read per day the pinned messages were posted in.
 */
export async function pinnedMessagesOf(ctx: Context, room: RoomRecord): Promise<MessageRecord[]> {
  const viewer = requireViewer(ctx);
  if (!isParticipant(room, viewer.login)) throw forbidden('Only participants read the messages of a room');
  const { stores } = ctx.services;
  const ids = await stores.pins.pins(room.name);
  const found = await stores.roomMessages.byIds(room.name, ids);
  return ids.flatMap((id) => {
    const message = found.get(id);
    // A deleted message leaves the pins as it is deleted; one whose unpinning failed (its deletion's retry finishes
    // it) or that a pin racing the deletion put back is not shown either.
    return message && !message.deleted && timeUuidDate(message.messageId) >= room.createdAt ? [message] : [];
  });
}
