
import { participant } from '../../resolvers/messenger/participants.js';
import { sendDirectMessage } from '../../resolvers/messenger/send.js';
import { directMessageNodes } from '../../resolvers/messenger/history.js';
import { directMessageKey } from '../../resolvers/messenger/model.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { sameForEveryViewer } from '../shared/viewer-dependent.js';
import { UserRef } from '../accounts/user.js';
import type { DirectMessageRecord } from '../../db/messenger/rows.js';

export const DirectMessageRef = builder.objectRef<DirectMessageRecord>('DirectMessage');

builder.node(DirectMessageRef, {
  description: 'A message between two users',
  id: { resolve: (m) => directMessageKey(m.sender, m.recipient, m.id), extensions: sameForEveryViewer },
  loadMany: (keys, ctx) => directMessageNodes(ctx, keys),
  fields: (t) => ({
    from: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (m, _args, ctx) => participant(ctx, m.sender) }),
    to: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (m, _args, ctx) => participant(ctx, m.recipient) }),
    content: t.exposeString('content', {
      nullable: true,
      description: 'The text; nullable, as Message.content is, so one selection of content serves both in InboxEvent (a direct message always has it today)',
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (m) => m.createdAt }),
  }),
});

export const DirectMessageConnection = builder.connectionObject({
  type: DirectMessageRef,
  name: 'DirectMessageConnection',
});

builder.mutationFields((t) => ({
  sendDirectMessage: t.field({
    type: DirectMessageRef,
    description: `Sends a message to another user: ${Limits.messenger.content.min}–${Limits.messenger.content.max} characters after trimming`,
    args: {
      to: t.arg.string({ required: true, description: "The recipient's login" }),
      content: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx) => sendDirectMessage(ctx, args.to, args.content),
  }),
}));
