/** Polls in rooms: the Poll a message may carry, posting one, voting, and taking a vote back. */
import * as polls from '../../resolvers/rooms/messages/polls.js';
import type { PollView } from '../../resolvers/rooms/messages/polls.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { MessageRef } from './message.js';

const { poll: limits } = Limits.room;

const PollAnswerRef = builder.objectRef<{ index: number; text: string; votes: number }>('PollAnswer').implement({
  fields: (t) => ({
    index: t.exposeInt('index', { description: 'What votePoll(answers:) takes for this answer' }),
    text: t.exposeString('text'),
    votes: t.exposeInt('votes', { description: 'Exact: one vote per voter who chose it' }),
  }),
});

export const PollRef = builder.objectRef<PollView>('Poll').implement({
  description: `A poll: ${limits.minAnswers}–${limits.maxAnswers} answers, single or multiple choice, open until closesAt`,
  fields: (t) => ({
    question: t.string({ description: 'The message content', resolve: (p) => polls.pollQuestion(p) }),
    answers: t.field({
      type: [PollAnswerRef],
      complexity: { field: 0, multiplier: limits.maxAnswers },
      resolve: (p) => p.definition.answers.map((text, index) => ({ index, text, votes: p.counts[index] ?? 0 })),
    }),
    multipleChoice: t.boolean({ resolve: (p) => p.definition.multipleChoice }),
    closesAt: t.field({ type: 'DateTime', nullable: true, resolve: (p) => p.definition.closesAt }),
    closed: t.exposeBoolean('closed', { description: 'Past closesAt: it takes no more votes (POLL_CLOSED), whether or not anyone voted since' }),
    voterCount: t.exposeInt('voters', { description: 'People who voted' }),
    myAnswers: t.field({
      type: ['Int'],
      description: "The viewer's own answers (indexes); empty when they have not voted",
      extensions: readsViewer,
      resolve: (p, _args, ctx) => polls.myAnswers(ctx, p),
    }),
  }),
});

builder.objectFields(MessageRef, (t) => ({
  poll: t.field({
    type: PollRef,
    nullable: true,
    description: 'The poll the message carries (its content is the question), with its counts (one read); null for a plain message',
    extensions: sameForEveryViewer,
    resolve: (m, _args, ctx) => polls.pollOf(ctx, m),
  }),
}));

const PostPollInput = builder.inputType('PostPollInput', {
  fields: (t) => ({
    roomName: t.string({ required: true }),
    question: t.string({ required: true, description: 'The message content: 1–4000 characters after trimming' }),
    answers: t.stringList({ required: true, description: `${limits.minAnswers}–${limits.maxAnswers} distinct answers of 1–${limits.answerMax} characters` }),
    multipleChoice: t.boolean({ description: 'A voter may choose several answers (false by default)' }),
    closesAt: t.field({ type: 'DateTime', description: `When voting ends: in the future, at most ${limits.maxOpenDays} days away; none: never` }),
    clientMessageId: t.string({ description: 'As postMessage: a retry with the same one posts the poll once' }),
  }),
});

builder.mutationFields((t) => ({
  postPoll: t.field({
    type: MessageRef,
    description:
      'Posts a poll as a message of the room, as postMessage posts (participants only, with its limits and events). ' +
      'BAD_USER_INPUT names the field: answers (their number, length or repeats), closesAt.',
    args: { input: t.arg({ type: PostPollInput, required: true }) },
    resolve: (_root, args, ctx) => polls.postPoll(ctx, args.input),
  }),
  votePoll: t.field({
    type: PollRef,
    description:
      "Sets the viewer's vote: `answers` (indexes) replace any earlier vote, so changing a vote is voting again. One answer " +
      'unless multipleChoice. Participants only. POLL_CLOSED past closesAt; BAD_USER_INPUT (field answers) for an index ' +
      'out of range, none, or several on a single-choice poll. Publishes PollUpdated.',
    args: { messageId: t.arg.id({ required: true }), answers: t.arg.intList({ required: true }) },
    resolve: (_root, args, ctx) => polls.votePoll(ctx, args.messageId, args.answers),
  }),
  retractVote: t.field({
    type: PollRef,
    description: "Takes the viewer's vote back (no vote: nothing changes). POLL_CLOSED past closesAt. Publishes PollUpdated.",
    args: { messageId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => polls.retractVote(ctx, args.messageId),
  }),
}));
