import * as threads from '../../resolvers/rooms/messages/threads.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { MessageConnection, MessageRef } from './message.js';

builder.objectFields(MessageRef, (t) => ({
  replyTo: t.field({
    type: MessageRef,
    nullable: true,
    description: 'For a reply, the message that starts its thread; null otherwise (or when that message is gone)',
    extensions: sameForEveryViewer,
    resolve: (m, _args, ctx) => threads.parentOf(ctx, m),
  }),
  replyCount: t.int({
    description: 'Replies in its thread (exact; no query for a message without replies, one count of its thread otherwise)',
    // A count of the thread's partition: priced like an object read.
    complexity: 1,
    extensions: sameForEveryViewer,
    resolve: (m, _args, ctx) => threads.replyCountOf(ctx, m),
  }),
  lastReplyAt: t.field({
    type: 'DateTime',
    nullable: true,
    description: 'When its thread last got a reply; null without replies',
    resolve: (m) => m.lastReplyAt,
  }),
  replies: t.field({
    type: MessageConnection,
    description:
      'Its thread, oldest first, for participants: one query for the thread and one per day its page of replies ' +
      `spans. Page size ${Limits.page.default} by default, at most ${Limits.page.max}.`,
    args: { first: t.arg.int(), after: t.arg.string() },
    // Participants only: a viewer who is not one gets FORBIDDEN.
    extensions: readsViewer,
    resolve: (m, args, ctx) => threads.repliesOf(ctx, m, args.first, args.after),
  }),
}));
