import type { ReactionSummary } from '../../resolvers/rooms/messages/reactions.js';
import * as reactions from '../../resolvers/rooms/messages/reactions.js';
import { personAsUser } from '../../resolvers/rooms/people.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { UserRef } from '../accounts/user.js';
import { MessageRef } from './message.js';

const { reactions: limits } = Limits.room;

export const ReactionRef = builder.objectRef<ReactionSummary>('Reaction').implement({
  description: 'One emoji given to a message, by how many people',
  fields: (t) => ({
    emoji: t.exposeString('emoji'),
    count: t.exposeInt('count', { description: 'Exact: one per person who reacted with this emoji' }),
    reactedByViewer: t.boolean({
      description: 'Whether the logged-in user reacted with this emoji (one query per message, for all its emoji)',
      extensions: readsViewer,
      resolve: (r, _args, ctx) => reactions.reactedByViewer(ctx, r),
    }),
    firstReactors: t.field({
      type: [UserRef],
      description: `The first ${limits.firstReactors} people who reacted with it, in login order (one query per emoji)`,
      complexity: { field: 1, multiplier: limits.firstReactors },
      extensions: sameForEveryViewer,
      resolve: async (r, _args, ctx) => (await reactions.firstReactors(ctx, r)).map((p) => personAsUser(ctx, p)),
    }),
  }),
});

builder.objectFields(MessageRef, (t) => ({
  reactions: t.field({
    type: [ReactionRef],
    description:
      `Each emoji the message has, with its count, in Unicode code point order; at most ${limits.maxKinds} kinds. ` +
      'No query for a message never reacted to; one for one that was.',
    complexity: { field: 1, multiplier: limits.maxKinds },
    extensions: sameForEveryViewer,
    resolve: (m, _args, ctx) => reactions.reactionsOf(ctx, m),
  }),
}));

const EMOJI = 'Exactly one emoji (skin tones, flags and other sequences count as one)';

builder.mutationFields((t) => ({
  addReaction: t.field({
    type: MessageRef,
    description:
      'Participants only; adding the same emoji twice is one reaction. A message holds at most ' +
      `${limits.maxKinds} different emoji over its life. Publishes ReactionChanged (coalesced per message).`,
    args: { messageId: t.arg.id({ required: true }), emoji: t.arg.string({ required: true, description: EMOJI }) },
    resolve: (_root, args, ctx) => reactions.addReaction(ctx, args.messageId, args.emoji),
  }),
  removeReaction: t.field({
    type: MessageRef,
    description: 'Participants only; removing a reaction you did not give changes nothing. Publishes ReactionChanged.',
    args: { messageId: t.arg.id({ required: true }), emoji: t.arg.string({ required: true, description: EMOJI }) },
    resolve: (_root, args, ctx) => reactions.removeReaction(ctx, args.messageId, args.emoji),
  }),
}));
