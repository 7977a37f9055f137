/**
 * Polls: a room message that carries a question (its content), 2–10 answers,
 * single or multiple choice, and an optional closing time. A vote is the
 * voter's whole choice, one row each (poll-votes.ts): changing it overwrites
 * it, so 200 voters at once end with exact counts. A poll takes votes until
 * its closing time, which every read and vote compares with the clock: it is
 * closed then whether anyone votes or not (no timer, nothing to lose in a
 * restart; a client shows it closed from closesAt). PollUpdated goes to the
 * room's feed after votes, coalesced per poll, with the message as it is
 * when it is sent (its poll's counts read then).
 */
import type { Context } from '../../context.js';
import type { MessageRecord, PollDefinition } from '../../../db/rooms/messages/message-row.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import { AppError, ErrorCode, badInput, notFound } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant } from '../access/access.js';
import { messageWithRoom } from './messages.js';
import { postMessage } from './posting.js';
import { decodeMessageId } from '../ids.js';
import { pollVotesLoader, roomMessageKey } from '../reads.js';
import { requireMay } from '../access/permissions.js';
import { carries } from '../live/feed.js';

const { poll: limits } = Limits.room;

export interface PollInput {
  roomName: string;
  question: string;
  answers: string[];
  multipleChoice?: boolean | null;
  closesAt?: Date | null;
  clientMessageId?: string | null;
}

/** A poll as a reader sees it: its definition, the counts, and whether it still takes votes. */
export interface PollView {
  message: MessageRecord;
  definition: PollDefinition;
  counts: number[];
  voters: number;
  closed: boolean;
}

function validPoll(ctx: Context, input: PollInput): PollDefinition {
  const answers = input.answers.map((a) => a.trim());
  if (answers.length < limits.minAnswers || answers.length > limits.maxAnswers) {
    throw badInput('answers', `A poll has ${limits.minAnswers} to ${limits.maxAnswers} answers`);
  }
  answers.forEach((a, i) => {
    if (a.length === 0 || a.length > limits.answerMax) throw badInput(`answers.${i}`, `Each answer has 1 to ${limits.answerMax} characters`);
  });
  if (new Set(answers.map((a) => a.toLowerCase())).size !== answers.length) throw badInput('answers', 'The answers must differ');
  const now = ctx.services.clock.now().getTime();
  const closesAt = input.closesAt ?? null;
  if (closesAt && (closesAt.getTime() <= now || closesAt.getTime() > now + limits.maxOpenDays * 86_400_000)) {
    throw badInput('closesAt', `closesAt must be in the future, at most ${limits.maxOpenDays} days away`);
  }
  return { answers, multipleChoice: input.multipleChoice ?? false, closesAt: closesAt?.toISOString() ?? null };
}

/** Posts a poll as a message of the room (its question the content), as postMessage posts any message. */
export async function postPoll(ctx: Context, input: PollInput): Promise<MessageRecord> {
  const definition = validPoll(ctx, input);
  return postMessage(ctx, { roomName: input.roomName, content: input.question, clientMessageId: input.clientMessageId, poll: definition });
}

const isClosed = (ctx: Context, poll: PollDefinition) => poll.closesAt !== null && ctx.services.clock.now().getTime() >= Date.parse(poll.closesAt);

/** The poll message, for a participant who may vote on it. */
async function pollToVoteOn(ctx: Context, messageId: string): Promise<{ message: MessageRecord; poll: PollDefinition; room: RoomRecord }> {
  const viewer = requireViewer(ctx);
  const { message, room } = await messageWithRoom(ctx, messageId);
  if (!message || !room) throw notFound('Message');
  // Asked first: whether a message was deleted or has a poll is the room's to tell, not an outsider's to learn.
  if (!isParticipant(room, viewer.login)) throw new AppError(ErrorCode.FORBIDDEN, 'Only participants of the room vote in its polls');
  // A vote is a reaction of a kind: in an announcement room, where only admins post, everyone votes.
  requireMay(room, viewer.login, 'REACT', 'vote in its polls');
  if (message.deleted) throw notFound('Message');
  // A hidden poll shows nothing of itself, as a hidden message shows no content: it takes no votes either.
  if (!message.poll || !message.visible) throw badInput('messageId', 'This message has no poll');
  if (isClosed(ctx, message.poll)) {
    throw new AppError(ErrorCode.POLL_CLOSED, 'This poll is closed', { closedAt: message.poll.closesAt, field: 'messageId' });
  }
  return { message, poll: message.poll, room };
}

/** The viewer's vote: `answers` (indexes) replace any earlier vote of theirs. One answer unless multiple choice. */
export async function votePoll(ctx: Context, messageId: string, answers: number[]): Promise<PollView> {
  const { message, poll, room } = await pollToVoteOn(ctx, messageId);
  const chosen = [...new Set(answers)].sort((a, b) => a - b);
  if (chosen.length === 0) throw badInput('answers', 'Choose at least one answer (retractVote takes a vote back)');
  if (!poll.multipleChoice && chosen.length > 1) throw badInput('answers', 'This poll takes one answer');
  if (chosen.some((a) => !Number.isInteger(a) || a < 0 || a >= poll.answers.length)) {
    throw badInput('answers', `Answers are indexes from 0 to ${poll.answers.length - 1}`);
  }
  await ctx.services.stores.pollVotes.vote(message.roomName, message.messageId, requireViewer(ctx).login, chosen);
  await dropIfDeletedMeanwhile(ctx, messageId);
  votesChanged(ctx, room, message);
  return pollOf(ctx, message) as Promise<PollView>;
}

/** Takes the viewer's vote back (nothing changes when they had none). */
export async function retractVote(ctx: Context, messageId: string): Promise<PollView> {
  const { message, room } = await pollToVoteOn(ctx, messageId);
  await ctx.services.stores.pollVotes.retract(message.roomName, message.messageId, requireViewer(ctx).login);
  votesChanged(ctx, room, message);
  return pollOf(ctx, message) as Promise<PollView>;
}

/** Message.poll: the definition with the counts (one read of the votes), or null for a plain message. */
export async function pollOf(ctx: Context, message: MessageRecord): Promise<PollView | null> {
  // A deleted or hidden message shows no poll, as it shows no content.
  if (!message.poll || message.deleted || !message.visible) return null;
  const votes = await votesOf(ctx, message);
  const counts = Array<number>(message.poll.answers.length).fill(0);
  for (const answers of votes.values()) for (const answer of answers) if (answer < counts.length) counts[answer]! += 1;
  return { message, definition: message.poll, counts, voters: votes.size, closed: isClosed(ctx, message.poll) };
}

/** The question: the poll message's content (pollOf serves no poll of a hidden or deleted message). */
export const pollQuestion = (poll: PollView) => poll.message.content ?? '';

/**
 * The viewer's own answers (empty when they have not voted), from the read
 * that gave the counts: in a live feed, the one read every subscriber of the
 * event shares.
 */
export async function myAnswers(ctx: Context, poll: PollView): Promise<number[]> {
  const viewer = requireViewer(ctx);
  return (await votesOf(ctx, poll.message)).get(viewer.login) ?? [];
}

/** Every vote of the poll, read once per request or live event (pollVotesLoader). */
const votesOf = (ctx: Context, message: MessageRecord) => pollVotesLoader(ctx).load(roomMessageKey(message.roomName, message.messageId));

/** After a vote or a retraction: the answer reads the votes again, and the room's feed hears of it. */
function votesChanged(ctx: Context, room: RoomRecord, message: MessageRecord): void {
  pollVotesLoader(ctx).clear(roomMessageKey(message.roomName, message.messageId));
  pollChanged(ctx, room, message);
}

/** PollUpdated to the room's feed, once per poll and window, with the message as it is then. */
function pollChanged(ctx: Context, room: RoomRecord, message: MessageRecord): void {
  const { rooms, stores } = ctx.services;
  // A feed that carries no poll events (a livestream's): nothing to gather.
  if (!carries(room.kind, 'PollUpdated')) return;
  rooms.coalescedEvents.changed(`poll\u0000${message.roomName}\u0000${message.messageId}`, async () => {
    const current = await stores.roomMessages.byKey(message.roomName, message.bucket, message.messageId);
    if (!current || current.deleted || !current.visible) return;
    await rooms.sequencer.take(room).publish([{ kind: 'PollUpdated', roomName: message.roomName, message: current }]);
  });
}

/**
 * A vote that read its poll before the message's (or the room's) deletion
 * can land after the deletion dropped the votes. The deletion drops them
 * after its LWT, and the vote reads the message again after its write:
 * whichever comes second sees the other, so one of them drops the late row.
 * Here it is the vote's turn: with the poll gone, every vote of it goes, and
 * the voter is told NOT_FOUND, as a moment later.
 */
async function dropIfDeletedMeanwhile(ctx: Context, messageId: string): Promise<void> {
  const { message } = await messageWithRoom(ctx, messageId);
  if (message && !message.deleted) return;
  const key = decodeMessageId('messageId', messageId);
  await ctx.services.stores.pollVotes.drop(key.roomName, key.messageId);
  throw notFound('Message');
}
