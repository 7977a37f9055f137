import type { FeedInterrupted as FeedInterruptedItem, FeedItem, RoomEvent } from '../../resolvers/rooms/feed.js';
import * as live from '../../resolvers/rooms/live.js';
import { personAsUser } from '../../resolvers/rooms/people.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { sameForEveryViewer } from '../shared/viewer-dependent.js';
import { UserRef } from '../accounts/user.js';
import { MessageRef } from './message.js';

type Of<K extends RoomEvent['kind']> = Extract<RoomEvent, { kind: K }>;

const MessagePosted = builder.objectRef<Of<'MessagePosted'>>('MessagePosted').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    message: t.field({ type: MessageRef, resolve: (e) => e.message }),
  }),
});
const MessageHidden = builder.objectRef<Of<'MessageHidden'>>('MessageHidden').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    message: t.field({ type: MessageRef, resolve: (e) => e.message }),
  }),
});
const ParticipantJoined = builder.objectRef<Of<'ParticipantJoined'>>('ParticipantJoined').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
  }),
});
const ParticipantLeft = builder.objectRef<Of<'ParticipantLeft'>>('ParticipantLeft').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
  }),
});
const TypingStarted = builder.objectRef<Of<'TypingStarted'>>('TypingStarted').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
  }),
});
const RoomDeleted = builder.objectRef<Of<'RoomDeleted'>>('RoomDeleted').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    deletedBy: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.deletedBy) }),
  }),
});

const FeedInterrupted = builder.objectRef<FeedInterruptedItem>('FeedInterrupted').implement({
  description:
    'The event bus was interrupted and live events of this room may have been lost; the feed goes on live. ' +
    `Fetch what you missed with room(name) { messages(last: ${Limits.page.max}, before: resumeCursor) } (continue with ` +
    'before: pageInfo.endCursor while hasPreviousPage; it may repeat messages you have: key them by id), and ' +
    're-read the participants, whose join and leave events may be lost too.',
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    resumeCursor: t.exposeString('resumeCursor', { description: 'A messages(before:) cursor from before the interruption' }),
  }),
});

const RoomEventRef = builder.unionType('RoomEvent', {
  types: [MessagePosted, MessageHidden, ParticipantJoined, ParticipantLeft, TypingStarted, RoomDeleted, FeedInterrupted],
  resolveType: (event) => event.kind,
});

builder.subscriptionFields((t) => ({
  roomEvents: t.field({
    type: RoomEventRef,
    description:
      "A room's live events, in the order they were committed. Participants only; ends after RoomDeleted, " +
      'and after the subscriber leaves the room (its own ParticipantLeft is the last event). Access is also ' +
      're-checked as events are delivered (every few seconds at most): a subscriber who no longer takes part ' +
      'gets a FORBIDDEN error (NOT_FOUND when the room is gone) and the stream ends.',
    args: { roomName: t.arg.string({ required: true }) },
    subscribe: (_root, args, ctx) => live.subscribeRoomEvents(ctx, args.roomName),
    // The end of a subscriber's access comes as an item of its own stream, never a shared event.
    extensions: sameForEveryViewer,
    resolve: (item: FeedItem, _args, ctx) => live.resolveRoomEvent(ctx, item),
  }),
}));

builder.mutationFields((t) => ({
  sendTyping: t.boolean({
    description:
      `Tells the room's other subscribers that you are typing. At most once per ${Limits.room.typingIntervalSeconds} seconds per user and room: ` +
      'false when this call fell inside that window and nothing was sent.',
    args: { roomName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => live.sendTyping(ctx, args.roomName),
  }),
}));
