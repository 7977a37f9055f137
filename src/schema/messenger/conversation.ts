
import * as inbox from '../../resolvers/messenger/inbox.js';
import { conversationMessages } from '../../resolvers/messenger/history.js';
import { participant } from '../../resolvers/messenger/participants.js';
import { markConversationRead } from '../../resolvers/messenger/read.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { DirectMessageConnection, DirectMessageRef } from './direct-message.js';
import { UserRef } from '../accounts/user.js';
import type { ConversationRecord } from '../../db/messenger/rows.js';

export const ConversationRef = builder.objectRef<ConversationRecord>('Conversation');

builder.node(ConversationRef, {
  description: 'A direct conversation, as the logged-in user sees it (one row of their inbox)',
  id: { resolve: (c) => inbox.conversationId(c), extensions: sameForEveryViewer },
  loadMany: (keys, ctx) => inbox.conversationNodes(ctx, keys),
  fields: (t) => ({
    partner: t.field({
      type: UserRef,
      description: 'The other participant',
      extensions: sameForEveryViewer,
      resolve: (c, _args, ctx) => participant(ctx, c.partner),
    }),
    lastMessage: t.field({ type: DirectMessageRef, nullable: true, resolve: (c) => c.lastMessage }),
    lastMessageAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.lastMessage?.createdAt ?? null }),
    unreadCount: t.int({ description: "The partner's messages I have not read", resolve: (c) => c.unreadCount }),
    firstUnreadAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.firstUnreadAt }),
    readUpTo: t.id({
      nullable: true,
      description: 'My read point: the id of the newest message my last markConversationRead covered; every message sent at or before it is read',
      resolve: (c) => inbox.readPointId(c, c.readUpTo),
    }),
    readAt: t.field({ type: 'DateTime', nullable: true, description: 'When I last marked it read', resolve: (c) => c.readAt }),
    partnerReadUpTo: t.id({
      nullable: true,
      description: "The partner's read point (read receipt): the id of the newest message they read; my messages sent at or before it are read",
      resolve: (c) => inbox.readPointId(c, c.partnerReadUpTo),
    }),
    partnerReadAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the partner last marked it read',
      resolve: (c) => c.partnerReadAt,
    }),
    messages: t.field({
      type: DirectMessageConnection,
      description: 'Newest first, across months',
      args: { first: t.arg.int(), after: t.arg.string() },
      // The owner's only.
      extensions: readsViewer,
      resolve: (c, args, ctx) => conversationMessages(ctx, c, args),
    }),
  }),
});

export const ConversationConnection = builder.connectionObject({
  type: ConversationRef,
  name: 'ConversationConnection',
});

builder.queryFields((t) => ({
  conversations: t.field({
    type: ConversationConnection,
    description: `My inbox, most recent conversation first (up to ${Limits.messenger.inboxPage.max} per page)`,
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: (_root, args, ctx) => inbox.conversations(ctx, args),
  }),
  conversation: t.field({
    type: ConversationRef,
    nullable: true,
    description: 'My conversation with another user; empty (no messages) when we never wrote to each other',
    args: { with: t.arg.string({ required: true, description: "The other participant's login" }) },
    resolve: (_root, args, ctx) => inbox.conversation(ctx, args.with),
  }),
}));

builder.mutationFields((t) => ({
  markConversationRead: t.field({
    type: ConversationRef,
    description: "Marks the partner's messages read up to the newest unread one; the partner sees it as partnerReadUpTo",
    args: { with: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => markConversationRead(ctx, args.with),
  }),
}));
