/**
 * Posting room messages: a participant's message (idempotent with a
 * clientMessageId, optionally a reply in a thread, with its mentions). The
 * server's own messages are in system-messages.ts.
 */
import type { Context } from '../../context.js';
import { commitHorizonMs, messageWithId, type MessageExtras } from '../model.js';
import type { RoomHead } from '../../../db/rooms/rooms.js';
import { newTimeUuid, timeUuidDate } from '../../../timeuuids.js';
import { dayBucket } from '../../../buckets.js';
import { conflict, forbidden, notFound } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { validClientId, validMetadata } from '../../../validation.js';
import { clientIdFor } from '../../idempotency/run.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant, requireRoom, seesRoom, viewerPerson } from '../access/access.js';
import { validContent, validRoomName } from '../validation.js';
import { mayMention, mentionedParticipants, publishMentions } from './mentions.js';
import { postTime } from './system-messages.js';
import { bannedFrom, requirePostAllowed } from '../moderation.js';
import { requireThreadParent } from './threads.js';
import { attachUploads, unlistAttached } from './attachments.js';
import type { ChatUser } from '../../../db/rooms/chat-user.js';
import type { MessageRecord, PollDefinition } from '../../../db/rooms/messages/message-row.js';
import { requireMay } from '../access/permissions.js';

/**
 * A message's write is sent only while its id is younger than the write
 * window: a slower write of an earlier id could land below messages that
 * catch-up already served (see catchUpSettleMs). The post fails instead; a
 * retry takes a new id (with the same clientMessageId once the old claim is
 * past the commit horizon).
 */
function requireWriteWindow(ctx: Context, messageId: string): void {
  const age = ctx.services.clock.now().getTime() - timeUuidDate(messageId).getTime();
  if (age > Limits.room.messageWriteWindowMs) {
    throw conflict('The message could not be written in time; send it again (with the same clientMessageId, it is posted once)');
  }
}

/** A post's message before its files are known: what messageWithId makes it from, but its attachments. */
interface MessageDraft {
  messageId: string;
  author: ChatUser;
  content: string;
  thread: Omit<MessageExtras, 'attachments'>;
}

/**
 * Writes a new message with its files: attaches the poster's uploads (or carries a forwarded original's) to its
 * id first, makes the message whole, checks the write window last, right before the write it guards, and unlists
 * the uploads once it is written.
 */
async function writeWithFiles(ctx: Context, room: RoomHead, draft: MessageDraft, files: Pick<PostArgs, 'attachments' | 'forwardedAttachments'>): Promise<MessageRecord> {
  const attachments = files.forwardedAttachments ?? (await attachUploads(ctx, files.attachments, room.name, draft.messageId));
  const message = messageWithId(room, draft.messageId, draft.author, draft.content, false, { ...draft.thread, attachments });
  requireWriteWindow(ctx, message.messageId);
  await ctx.services.stores.roomMessages.insert(room, message);
  await unlistAttached(ctx, message);
  return message;
}

export interface PostArgs {
  roomName: string;
  content: string;
  clientMessageId?: string | null;
  /** The id of the message this one replies to (a thread). */
  replyTo?: string | null;
  /** A poll the message carries (validated by the caller: polls.ts). */
  poll?: PollDefinition | null;
  /** The id of the message this one forwards (checked by the caller: forwarding.ts). */
  forwardedFrom?: string | null;
  /** Custom data: a JSON object (validated here). */
  metadata?: unknown;
  /** Ids of the poster's uploads to attach (attachments.ts checks and attaches them). */
  attachments?: readonly string[] | null;
  /** A forwarded original's files, carried by reference (forwarding.ts checked the original is readable). */
  forwardedAttachments?: string[];
}

/**
 * The room a post goes to, and of its participants what the post needs:
 * everyone when the content may mention someone, else only the poster's own
 * entries (a post in a room of a thousand need not read a thousand people).
 */
async function roomToPostIn(ctx: Context, name: string, login: string, content: string): Promise<{ room: RoomHead; participants: ChatUser[] }> {
  if (mayMention(content)) {
    const room = await requireRoom(ctx, name);
    return { room, participants: room.participants };
  }
  const seen = await ctx.services.stores.rooms.seenBy(name, login);
  // A private room is hidden from whoever is not in it (access.ts), as a room that does not exist.
  if (!seen || !seesRoom({ ...seen.room, participants: seen.entries }, login)) throw notFound('Room');
  return { room: seen.room, participants: seen.entries };
}

export async function postMessage(ctx: Context, args: PostArgs): Promise<MessageRecord> {
  const viewer = requireViewer(ctx);
  const name = validRoomName('roomName', args.roomName);
  const content = validContent('content', args.content);
  // Under an idempotency key without a clientMessageId, one derived from the key: a retry posts once.
  const clientId = validClientId('clientMessageId', args.clientMessageId) ?? clientIdFor(ctx);
  const metadata = args.metadata == null ? null : validMetadata('metadata', args.metadata);
  const [{ room, participants }, author] = await Promise.all([roomToPostIn(ctx, name, viewer.login, content), viewerPerson(ctx)]);
  if (room.banned.has(author.login)) throw bannedFrom(name);
  if (!isParticipant({ participants }, author.login)) throw forbidden('Only participants of the room may do this');
  requireMay({ ...room, participants }, author.login, 'POST', 'post');
  await requirePostAllowed(ctx, room, participants, author.login);
  const parent = args.replyTo == null ? null : await requireThreadParent(ctx, room, 'replyTo', args.replyTo);
  const thread: MessageDraft['thread'] = {
    replyTo: parent?.messageId ?? null,
    mentions: mentionedParticipants(participants, content),
    poll: args.poll ?? null,
    forwardedFrom: args.forwardedFrom ?? null,
    metadata,
  };
  const { stores } = ctx.services;
  const at = postTime(ctx.services, room);

  const turn = ctx.services.rooms.sequencer.take(room);
  const draft: MessageDraft = { messageId: newTimeUuid(at).toString(), author, content, thread };
  let message: MessageRecord;
  try {
    if (clientId) {
      const claim = await stores.messageClientIds.claim(
        room,
        author.login,
        clientId,
        { messageId: draft.messageId, content },
        {
          ttlSeconds: Limits.room.clientMessageIdTtlSeconds,
          now: ctx.services.clock.now(),
          commitHorizonMs: commitHorizonMs(ctx.services.config.cassandra.requestTimeoutMs),
        },
      );
      if (!claim.claimed) {
        turn.cancel();
        return await originalPost(ctx, room, { ...draft, messageId: claim.messageId, content: claim.content }, args);
      }
    }
    message = await writeWithFiles(ctx, room, draft, args);
  } catch (err) {
    turn.cancel();
    throw err;
  }
  await turn.publish([{ kind: 'MessagePosted', roomName: name, message }]);
  await publishMentions(ctx, message, message.mentions);
  return message;
}

/**
 * A retry of a post that carried the same clientMessageId: the original
 * message. If the original attempt died between its claim and its write,
 * write the message now (idempotent, with the claimed id and content, and the
 * thread the retry names, as the original did) while its id is inside the
 * write window, so a success answered to any attempt always means the message
 * exists. Past the window the retry fails (CONFLICT); past the commit horizon
 * the claim is dead and a retry posts afresh.
 */
async function originalPost(ctx: Context, room: RoomHead, claimed: MessageDraft, files: Pick<PostArgs, 'attachments' | 'forwardedAttachments'>): Promise<MessageRecord> {
  const { roomMessages } = ctx.services.stores;
  const stored = await roomMessages.byKey(room.name, dayBucket(timeUuidDate(claimed.messageId)), claimed.messageId);
  if (stored) return stored;
  return writeWithFiles(ctx, room, claimed, files);
}
