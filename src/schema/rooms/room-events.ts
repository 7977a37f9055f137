import type { FeedInterrupted as FeedInterruptedItem, FeedItem, RoomEvent } from '../../resolvers/rooms/live/feed.js';
import * as live from '../../resolvers/rooms/live/live.js';
import { personAsUser } from '../../resolvers/rooms/people.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { sameForEveryViewer } from '../shared/viewer-dependent.js';
import { UserRef } from '../accounts/user.js';

import { MessageRef } from './message.js';
import { ReactionRef } from './reactions.js';
import { reactionsOf } from '../../resolvers/rooms/messages/reactions.js';
import type { MessageRecord } from '../../db/rooms/messages/message-row.js';
import { movedReaders } from '../../resolvers/rooms/seen-by.js';
import { roomMetadata } from '../../resolvers/rooms/moderation.js';

type Of<K extends RoomEvent['kind']> = Extract<RoomEvent, { kind: K }>;

/** Every event's cursor field (see live.eventCursor): the same for every viewer. */
const CURSOR = {
  description:
    'Where this event stands in the feed: resubscribe with roomEvents(after: cursor) to resume. Resuming never ' +
    'skips a message, and may repeat some of the last half minute (key them by id): a message posted on another ' +
    'server, or written slowly, can arrive after a newer one.',
  extensions: sameForEveryViewer,
};

type MessageEventKind = 'MessagePosted' | 'MessageHidden' | 'MessageEdited' | 'MessageDeleted' | 'MessagePinned' | 'MessageUnpinned' | 'PollUpdated';

/** An event about one message, which it carries as it was when the event was sent. */
function messageEvent<K extends MessageEventKind>(kind: K, description: string) {
  return builder.objectRef<{ kind: K; roomName: string; message: MessageRecord }>(kind).implement({
    description,
    fields: (t) => ({
      roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
      message: t.field({ type: MessageRef, resolve: (e) => e.message }),
    }),
  });
}

const MessagePosted = messageEvent('MessagePosted', 'A new message (a reply has replyTo set)');
const MessageHidden = messageEvent('MessageHidden', 'A message was hidden (the event carries no content)');
const MessageEdited = messageEvent('MessageEdited', 'A message was edited: keep the highest message.version you have seen');
const MessageDeleted = messageEvent('MessageDeleted', 'A message was deleted: it carries the tombstone');
const MessagePinned = messageEvent('MessagePinned', "An admin or the owner pinned a message");
const MessageUnpinned = messageEvent('MessageUnpinned', "An admin or the owner unpinned a message");
const PollUpdated = messageEvent(
  'PollUpdated',
  'Votes of a poll changed: its message, whose poll shows the counts as they are now. At most one event per poll and server every REACTION_EVENT_WINDOW_MS',
);

const ReactionChanged = builder.objectRef<Of<'ReactionChanged'>>('ReactionChanged').implement({
  description: 'Reactions to a message changed: at most one event per message and server every REACTION_EVENT_WINDOW_MS (250 ms by default)',
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    message: t.field({ type: MessageRef, resolve: (e) => e.message }),
    reactions: t.field({
      type: [ReactionRef],
      description: 'The counts at countedAt',
      complexity: { field: 1, multiplier: Limits.room.reactions.maxKinds },
      extensions: sameForEveryViewer,
      resolve: (e, _args, ctx) => reactionsOf(ctx, e.message, e.counts),
    }),
    countedAt: t.field({
      type: 'DateTime',
      description:
        'When the counts were read. Events of two servers may arrive in either order: of two for one message, ' +
        'keep the one counted later',
      resolve: (e) => new Date(e.countedAt),
    }),
  }),
});
const ParticipantJoined = builder.objectRef<Of<'ParticipantJoined'>>('ParticipantJoined').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
  }),
});
const ParticipantLeft = builder.objectRef<Of<'ParticipantLeft'>>('ParticipantLeft').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
  }),
});
const TypingStarted = builder.objectRef<Of<'TypingStarted'>>('TypingStarted').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
  }),
});
const RoomDeleted = builder.objectRef<Of<'RoomDeleted'>>('RoomDeleted').implement({
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    deletedBy: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.deletedBy) }),
  }),
});

const ParticipantRemoved = builder.objectRef<Of<'ParticipantRemoved'>>('ParticipantRemoved').implement({
  description: "A moderator removed a participant (banned: they cannot join again). The removed user's own feed ends with it.",
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
    by: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.by) }),
    banned: t.exposeBoolean('banned'),
  }),
});
const ParticipantMuted = builder.objectRef<Of<'ParticipantMuted'>>('ParticipantMuted').implement({
  description: 'A moderator muted a participant until a time (null: the mute was lifted)',
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
    until: t.field({ type: 'DateTime', nullable: true, resolve: (e) => e.until }),
    by: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.by) }),
  }),
});
const RoomMetadataChanged = builder.objectRef<Of<'RoomMetadataChanged'>>('RoomMetadataChanged').implement({
  description: "An admin or the owner changed its custom data",
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    metadata: t.field({ type: 'JSON', nullable: true, description: 'As it is now (null: cleared)', resolve: (e) => roomMetadata(e) }),
    by: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.by) }),
  }),
});
const SlowModeChanged = builder.objectRef<Of<'SlowModeChanged'>>('SlowModeChanged').implement({
  description: 'Slow mode changed: one message per `seconds` per participant (null: off)',
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    seconds: t.exposeInt('seconds', { nullable: true }),
    by: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.by) }),
  }),
});
const ModeratorChanged = builder.objectRef<Of<'ModeratorChanged'>>('ModeratorChanged').implement({
  description: 'Someone above moderators named a moderator (moderator: true) or took the role back',
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
    moderator: t.exposeBoolean('moderator'),
    by: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.by) }),
  }),
});

const RoomReadUpdated = builder.objectRef<Of<'RoomReadUpdated'>>('RoomReadUpdated').implement({
  description:
    'Participants moved their read markers: read Message.seenBy again for the messages you show. At most one event per ' +
    'room and server every REACTION_EVENT_WINDOW_MS (250 ms by default), naming everyone who moved in it.',
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    readers: t.field({
      type: [UserRef],
      description: 'Those whose markers moved',
      complexity: { field: 1, multiplier: Limits.room.maxParticipants },
      extensions: sameForEveryViewer,
      resolve: (e, _args, ctx) => movedReaders(ctx, e.readers),
    }),
  }),
});

const FeedInterrupted = builder.objectRef<FeedInterruptedItem>('FeedInterrupted').implement({
  description:
    'The event bus was interrupted and live events of this room may have been lost; the feed goes on live. ' +
    `Fetch what you missed with room(roomName) { messages(last: ${Limits.page.max}, before: resumeCursor) } (continue with ` +
    'before: pageInfo.endCursor while hasPreviousPage; it may repeat messages you have: key them by id), and ' +
    're-read the participants, whose join and leave events may be lost too.',
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    cursor: t.string({ ...CURSOR, resolve: (e, _args, ctx) => live.eventCursor(ctx, e as RoomEvent | FeedInterruptedItem) }),
    resumeCursor: t.exposeString('resumeCursor', { description: 'A messages(before:) cursor from before the interruption' }),
  }),
});

const RoomEventRef = builder.unionType('RoomEvent', {
  types: [
    MessagePosted,
    MessageHidden,
    MessageEdited,
    MessageDeleted,
    ReactionChanged,
    MessagePinned,
    MessageUnpinned,
    ParticipantJoined,
    ParticipantLeft,
    TypingStarted,
    RoomDeleted,
    ParticipantRemoved,
    ParticipantMuted,
    SlowModeChanged,
    ModeratorChanged,
    RoomReadUpdated,
    PollUpdated,
    RoomMetadataChanged,
    FeedInterrupted,
  ],
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
    args: {
      roomName: t.arg.string({ required: true }),
      after: t.arg.string({
        description:
          'Resume from an event\'s cursor: every message posted after it is replayed from storage (as MessagePosted), ' +
          'then the feed goes on live, with nothing missed or repeated at the seam. The replay starts a little before ' +
          'a cursor of the last half minute, so it may repeat messages you have (key them by id). Other events are ' +
          'not replayed.',
      }),
    },
    subscribe: (_root, args, ctx) => live.subscribeRoomEvents(ctx, args.roomName, args.after),
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
