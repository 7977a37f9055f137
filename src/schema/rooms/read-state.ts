import type { RoomReadState } from '../../resolvers/rooms/read-state.js';
import * as readState from '../../resolvers/rooms/read-state.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { MessageRef } from './message.js';
import { RoomRef } from './room.js';
import { UserRef } from '../accounts/user.js';
import { seenBy, type SeenBy } from '../../resolvers/rooms/seen-by.js';

const { readState: limits } = Limits.room;

const RoomReadStateRef = builder.objectRef<RoomReadState>('RoomReadState').implement({
  description:
    "The viewer's place in a room: what they have read, and what is unread after it (messages by others, not " +
    'hidden, deleted or system messages)',
  fields: (t) => ({
    lastReadMessage: t.field({
      type: MessageRef,
      nullable: true,
      description: 'The newest message read; null when none. Loaded in one batch with those of every room on the page',
      extensions: sameForEveryViewer,
      resolve: (s, _args, ctx) => readState.lastReadMessage(ctx, s),
    }),
    firstUnreadMessage: t.field({
      type: MessageRef,
      nullable: true,
      description: 'The oldest unread message; null when nothing is unread (read by the same walk that counts: no query of its own)',
      resolve: (s) => s.firstUnread,
    }),
    unreadCount: t.exposeInt('unreadCount', { description: `Exact up to ${limits.unreadCap}; past that, ${limits.unreadCap} with unreadCapped true` }),
    unreadCapped: t.exposeBoolean('unreadCapped', { description: `More than ${limits.unreadCap} messages are unread (show "${limits.unreadCap}+")` }),
    mentionCount: t.exposeInt('mentionCount', { description: 'Unread messages that mention the viewer: exact' }),
  }),
});

builder.objectFields(RoomRef, (t) => ({
  readState: t.field({
    type: RoomReadStateRef,
    description:
      "The viewer's read state, for participants. It costs one read of the viewer's markers per request (all rooms), " +
      `then per room a walk of the unread history (at most ${limits.scanRows} rows) and one read of the mentions after the marker.`,
    // A walk of up to a few day partitions and a count: priced like a page.
    complexity: { field: 5, multiplier: 1 },
    extensions: readsViewer,
    resolve: (room, _args, ctx) => readState.readStateOf(ctx, room),
  }),
}));

const SeenByConnection = builder.connectionObject({
  type: UserRef,
  name: 'SeenByConnection',
  fields: (t) => ({
    count: t.int({ description: 'Everyone who has seen the message, not just this page', resolve: (c) => (c as SeenBy).count }),
  }),
});

builder.objectFields(MessageRef, (t) => ({
  seenBy: t.field({
    type: SeenByConnection,
    description:
      "The participants who have read the message (their read marker is at or past it), its author aside, in login order; " +
      'for participants and its author. One read of the room\'s markers per request, for every message of a page. ' +
      `Page size ${Limits.page.default} by default, at most ${Limits.page.max}.`,
    args: { first: t.arg.int(), after: t.arg.string() },
    extensions: readsViewer,
    resolve: (m, args, ctx) => seenBy(ctx, m, args.first, args.after),
  }),
}));

builder.mutationFields((t) => ({
  markRoomRead: t.field({
    type: RoomReadStateRef,
    description: 'Moves your read marker forward to upTo (a message of the room); an older id changes nothing.',
    args: { roomName: t.arg.string({ required: true }), upTo: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => readState.markRoomRead(ctx, args.roomName, args.upTo),
  }),
  markRoomUnread: t.field({
    type: RoomReadStateRef,
    description: 'Marks `from` and every later message unread again: the one way to move your marker back.',
    args: { roomName: t.arg.string({ required: true }), from: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => readState.markRoomUnread(ctx, args.roomName, args.from),
  }),
}));
