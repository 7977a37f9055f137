import * as pins from '../../resolvers/rooms/messages/pins.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { readsViewer } from '../shared/viewer-dependent.js';
import { MessageRef } from './message.js';
import { RoomRef } from './room.js';

builder.objectFields(RoomRef, (t) => ({
  pinnedMessages: t.field({
    type: [MessageRef],
    description: `Participants only: the pinned messages in pin order, first pinned first (at most ${Limits.room.maxPins})`,
    complexity: { field: 1, multiplier: Limits.room.maxPins },
    extensions: readsViewer,
    resolve: (room, _args, ctx) => pins.pinnedMessagesOf(ctx, room),
  }),
}));

builder.mutationFields((t) => ({
  pinMessage: t.field({
    type: MessageRef,
    description: `An admin or the owner pins a message (again: no change); at most ${Limits.room.maxPins} per room. Publishes MessagePinned.`,
    args: { messageId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => pins.pinMessage(ctx, args.messageId),
  }),
  unpinMessage: t.field({
    type: MessageRef,
    description: "An admin or the owner unpins a message (not pinned: no change). Publishes MessageUnpinned.",
    args: { messageId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => pins.unpinMessage(ctx, args.messageId),
  }),
}));
