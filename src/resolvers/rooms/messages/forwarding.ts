/**
 * Forwarding a room message to another room or to a conversation: a new
 * message with the original's current content, posted as the forwarder's
 * own (with every rule of the target: participation, moderation, blocks),
 * that keeps the original's id. The original shows through forwardedFrom only
 * to those who may read it; the copy stands on its own for everyone else.
 */
import type { Context } from '../../context.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';
import type { DirectMessageRecord } from '../../../db/messenger/rows.js';
import { badInput } from '../../../errors.js';
import { timeUuidDate } from '../../../timeuuids.js';
import { requireViewer } from '../../shared/guards.js';
import { visibleOrNull } from '../../shared/nodes.js';
import { sendDirectMessage } from '../../messenger/send.js';
import { isParticipant, visibleTo } from '../access/access.js';
import { decodeMessageId, encodeMessageId } from '../ids.js';
import { messageById, visibleContent } from './messages.js';
import { postMessage } from './posting.js';
import { messageLoader, roomLoader, roomMessageKey } from '../reads.js';

export interface ForwardArgs {
  messageId: string;
  /** The room to forward to, or… */
  toRoom?: string | null;
  /** …the login of the person to send it to. */
  to?: string | null;
  clientMessageId?: string | null;
}

export type Forwarded = MessageRecord | DirectMessageRecord;

/** Which kind of copy forwardMessage made. */
export const forwardedKind = (f: Forwarded) => ('sender' in f ? 'DirectMessage' : 'Message');

export async function forwardMessage(ctx: Context, args: ForwardArgs): Promise<Forwarded> {
  if ((args.toRoom == null) === (args.to == null)) throw badInput('toRoom', 'Give exactly one of toRoom and to');
  // The viewer must be able to read the original: FORBIDDEN from a room they do not take part in, NOT_FOUND when gone.
  const original = await messageById(ctx, args.messageId);
  const content = original && visibleContent(original);
  if (!original || content === null || original.systemMessage) {
    throw badInput('messageId', 'Only a message with content can be forwarded (not a deleted, hidden or system message)');
  }
  const forwardedFrom = encodeMessageId(original);
  if (args.toRoom != null) {
    // Its files by reference: the copy shows the original's, served through the copy to whoever may see it.
    return postMessage(ctx, { roomName: args.toRoom, content, clientMessageId: args.clientMessageId, forwardedFrom, forwardedAttachments: original.attachments });
  }
  return sendDirectMessage(ctx, args.to!, content, forwardedFrom);
}

/**
 * The message a forwarded one copies, for a viewer who may read it (its room's
 * participants, its author: as message(messageId:) decides); null for anyone
 * else, or once it is gone. The original and its room come through the
 * loaders, so a live event's subscribers share one read of each, and each
 * subscriber is authorized on its own.
 */
export async function forwardedFromOf(ctx: Context, forwardedFrom: string | null | undefined): Promise<MessageRecord | null> {
  if (!forwardedFrom) return null;
  const viewer = requireViewer(ctx);
  return visibleOrNull(async () => {
    const key = decodeMessageId('forwardedFrom', forwardedFrom);
    const [message, read] = await Promise.all([messageLoader(ctx).load(roomMessageKey(key.roomName, key.messageId)), roomLoader(ctx).load(key.roomName)]);
    const room = visibleTo(ctx, read); // a private room hidden from the viewer hides its messages, their own too
    // A message older than its room belongs to a room of the same name deleted before.
    if (!message || !room || timeUuidDate(message.messageId) < room.createdAt) return null;
    return isParticipant(room, viewer.login) || message.author.login === viewer.login ? message : null;
  });
}
