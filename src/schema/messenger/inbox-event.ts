import {
  eventConversation,
  inboxEvent,
  subscribeInbox,
  type ConversationReadEvent,
  type InboxEvent,
  type InboxInterruptedEvent,
  type MessageReceivedEvent,
  type MentionedEvent,
  type RoomInvitationReceivedEvent,
} from '../../resolvers/messenger/events.js';
import { invitationReceived } from '../../resolvers/rooms/access/invitations.js';
import { participant } from '../../resolvers/messenger/participants.js';
import { readPointId } from '../../resolvers/messenger/inbox.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { ConversationRef } from './conversation.js';
import { DirectMessageRef } from './direct-message.js';
import { UserRef } from '../accounts/user.js';
import { MessageRef } from '../rooms/message.js';
import { RoomInvitationRef } from '../rooms/access/invitations.js';

const DirectMessageReceived = builder.objectRef<MessageReceivedEvent>('DirectMessageReceived').implement({
  fields: (t) => ({
    message: t.field({ type: DirectMessageRef, resolve: (e) => e.message }),
    conversation: t.field({
      type: ConversationRef,
      description: 'The conversation as it is now (unread count included)',
      // The subscriber's own inbox row.
      extensions: readsViewer,
      resolve: (e, _args, ctx) => eventConversation(ctx, e),
    }),
  }),
});

const ConversationRead = builder.objectRef<ConversationReadEvent>('ConversationRead').implement({
  description: 'A read receipt: the partner read my messages (or I read theirs on another device)',
  fields: (t) => ({
    partner: t.field({
      type: UserRef,
      description: 'The other participant',
      extensions: sameForEveryViewer,
      resolve: (e, _args, ctx) => participant(ctx, e.partner),
    }),
    reader: t.field({ type: UserRef, description: 'Who read', extensions: sameForEveryViewer, resolve: (e, _args, ctx) => participant(ctx, e.reader) }),
    readAt: t.field({ type: 'DateTime', resolve: (e) => e.readAt }),
    readUpTo: t.id({ description: 'The id of the newest message read: every message sent at or before it is read', resolve: (e) => readPointId(e, e.readUpTo)! }),
  }),
});

const Mentioned = builder.objectRef<MentionedEvent>('Mentioned').implement({
  description: 'A room message mentions me (@login), as posted or as edited',
  fields: (t) => ({
    message: t.field({ type: MessageRef, resolve: (e) => e.message }),
  }),
});

const RoomInvitationReceived = builder.objectRef<RoomInvitationReceivedEvent>('RoomInvitationReceived').implement({
  description: 'I am invited into a room (once per invitation: inviting again says nothing)',
  fields: (t) => ({
    invitation: t.field({
      type: RoomInvitationRef,
      nullable: true,
      description:
        'The invitation as it is on delivery: null once it no longer waits for me (accepted, declined, revoked, its room ' +
        'gone, or I was banned); roomInvitations lists those that wait',
      extensions: readsViewer,
      resolve: (e, _args, ctx) => invitationReceived(ctx, e.roomName, e.invitedAt),
    }),
  }),
});

const InboxInterrupted = builder.objectRef<InboxInterruptedEvent>('InboxInterrupted').implement({
  description:
    'The event bus was interrupted: live events of my inbox since interruptedAt may have been lost. Re-read ' +
    'conversations (their unread counts are exact); the feed goes on live',
  fields: (t) => ({
    interruptedAt: t.field({ type: 'DateTime', description: 'Events from this time on may have been lost', resolve: (e) => e.interruptedAt }),
  }),
});

const InboxEventRef = builder.unionType('InboxEvent', {
  types: [DirectMessageReceived, ConversationRead, Mentioned, RoomInvitationReceived, InboxInterrupted],
  resolveType: (e: InboxEvent) => e.type,
});

builder.subscriptionFields((t) => ({
  inboxEvents: t.field({
    type: InboxEventRef,
    description:
      'Messages to me, read receipts, mentions of me in rooms and invitations into rooms, live, for the logged-in user ' +
      'only. After the event ' +
      'bus was interrupted, InboxInterrupted says to re-read conversations',
    subscribe: (_root, _args, ctx) => subscribeInbox(ctx),
    // Refuses an event addressed to anyone but the subscriber.
    extensions: readsViewer,
    resolve: (event: InboxEvent, _args, ctx) => inboxEvent(ctx, event),
  }),
}));
