/**
 * Reactions to room messages: participants add and remove emoji; each emoji
 * shows its exact count, whether the viewer reacted with it and the first
 * people who did. Stored one row per user and emoji (db/rooms/messages/reactions.ts).
 */
import type { Context } from '../../context.js';

import type { RoomRecord } from '../../../db/rooms/rooms.js';
import { badInput, forbidden, notFound, LimitName, limitReached } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant, viewerPerson } from '../access/access.js';
import { messageWithRoom } from './messages.js';
import type { ChatUser } from '../../../db/rooms/chat-user.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';
import { viewerReactionsLoader } from '../reads.js';
import { requireMay } from '../access/permissions.js';
import { carries } from '../live/feed.js';

const { reactions: limits } = Limits.room;

/** One emoji as Unicode defines it (RGI: the sequences platforms draw as one picture, skin tones and flags included). */
const ONE_EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v');

export function validEmoji(field: string, raw: string): string {
  const emoji = raw.trim();
  if (emoji.length === 0 || emoji.length > limits.emojiMaxLength || !ONE_EMOJI.test(emoji)) {
    throw badInput(field, `${field} must be exactly one emoji`);
  }
  return emoji;
}

/** One emoji's reactions to a message, as served (the same for every viewer: see reactedByViewer). */
export interface ReactionSummary {
  message: MessageRecord;
  emoji: string;
  count: number;
  /** Every emoji of the message with reactions: the viewer's own are read once for all of them. */
  emojis: string[];
}

async function reactableMessage(ctx: Context, id: string): Promise<{ message: MessageRecord; room: RoomRecord; person: ChatUser }> {
  const viewer = requireViewer(ctx);
  const [{ message, room }, person] = await Promise.all([messageWithRoom(ctx, id), viewerPerson(ctx)]);
  if (!message || !room) throw notFound('Message');
  if (!isParticipant(room, viewer.login)) throw forbidden('Only participants of the room may react');
  requireMay(room, viewer.login, 'REACT', 'react');
  return { message, room, person };
}

/** Announces, once per coalescing window, that this message's reactions changed, with the counts as they are then. */
function reactionsChanged(ctx: Context, room: RoomRecord, message: MessageRecord): void {
  const { stores, rooms, clock } = ctx.services;
  // A feed that carries no reaction events (a livestream's) has nothing to count them for.
  if (!carries(room.kind, 'ReactionChanged')) return;
  rooms.coalescedEvents.changed(`reactions\u0000${message.roomName}\u0000${message.messageId}`, async () => {
    // Taken before the read: events of two servers may arrive in either order, and a client keeps the later count.
    const countedAt = clock.now().getTime();
    const current = await stores.roomMessages.byKey(message.roomName, message.bucket, message.messageId);
    if (!current || current.deleted) return;
    const counts = await stores.reactions.counts(current);
    await rooms.sequencer
      .take(room)
      .publish([{ kind: 'ReactionChanged', roomName: message.roomName, message: current, counts, countedAt }]);
  });
}

/** Adds the viewer's reaction (adding it twice is one reaction). */
export async function addReaction(ctx: Context, id: string, rawEmoji: string): Promise<MessageRecord> {
  const emoji = validEmoji('emoji', rawEmoji);
  const { message, room, person } = await reactableMessage(ctx, id);
  if (message.deleted) throw badInput('messageId', 'The message was deleted: it takes no reactions');
  const { reactions } = ctx.services.stores;
  const kind = await reactions.allowKind(message, emoji, limits.maxKinds);
  if (kind === 'gone') throw notFound('Message');
  if (kind === 'full') throw limitReached(LimitName.REACTION_KINDS_PER_MESSAGE, limits.maxKinds, `A message holds at most ${limits.maxKinds} different reactions`);
  await reactions.add(message, emoji, person);
  reactionsChanged(ctx, room, message);
  const kinds = message.reactionKinds.includes(emoji) ? message.reactionKinds : [...message.reactionKinds, emoji];
  return { ...message, reactionKinds: kinds };
}

/** Removes the viewer's reaction (removing one that is not there changes nothing). */
export async function removeReaction(ctx: Context, id: string, rawEmoji: string): Promise<MessageRecord> {
  const emoji = validEmoji('emoji', rawEmoji);
  const { message, room, person } = await reactableMessage(ctx, id);
  await ctx.services.stores.reactions.remove(message, emoji, person.login);
  reactionsChanged(ctx, room, message);
  return message;
}

/**
 * Each emoji of a message with its count, in emoji order: one query for a
 * message that has had reactions, none for one that never had any. `counts`,
 * when given, are those an event carries.
 */
export async function reactionsOf(
  ctx: Context,
  message: MessageRecord,
  counts?: Array<{ emoji: string; count: number }>,
): Promise<ReactionSummary[]> {
  if (message.deleted || message.reactionKinds.length === 0) return [];
  const found = counts ?? (await ctx.services.stores.reactions.counts(message));
  const emojis = found.map((c) => c.emoji);
  return found.map(({ emoji, count }) => ({ message, emoji, count, emojis }));
}

/** Whether the viewer reacted with this emoji: one read per message for all its emoji (a per-request loader). */
export async function reactedByViewer(ctx: Context, summary: ReactionSummary): Promise<boolean> {
  const login = requireViewer(ctx).login;
  return (await viewerReactionsLoader(ctx).load({ message: summary.message, emojis: summary.emojis, login })).has(summary.emoji);
}

/** The first people (in login order) who reacted with this emoji. */
export function firstReactors(ctx: Context, summary: ReactionSummary): Promise<ChatUser[]> {
  return ctx.services.stores.reactions.firstReactors(summary.message, summary.emoji, limits.firstReactors);
}
