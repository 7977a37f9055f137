import * as presence from '../../resolvers/rooms/live/presence-queries.js';
import type { PresenceChange } from '../../resolvers/rooms/live/presence.js';
import { personAsUser } from '../../resolvers/rooms/people.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { UserRef } from '../accounts/user.js';
import { RoomRef } from './room.js';
import { Limits } from '../../limits.js';

builder.objectFields(RoomRef, (t) => ({
  onlineParticipants: t.field({
    type: [UserRef],
    description: 'Participants only: those with a live roomEvents feed open on any server (one Redis read)',
    complexity: { field: 1, multiplier: Limits.room.maxParticipants },
    extensions: readsViewer,
    resolve: (room, _args, ctx) => presence.onlineParticipants(ctx, room),
  }),
}));

builder.objectFields(UserRef, (t) => ({
  lastSeenAt: t.field({
    type: 'DateTime',
    nullable: true,
    description:
      'When the user was last online in a room: their latest presence heartbeat, or when they went offline ' +
      '(stored with the account, so it outlives a Redis that lost its data); null when never seen',
    extensions: sameForEveryViewer,
    resolve: (user, _args, ctx) => presence.lastSeenAt(ctx, user.login),
  }),
}));

const PresenceChangedRef = builder.objectRef<PresenceChange>('PresenceChanged').implement({
  description:
    'A participant came online in the room (their first roomEvents feed opened, on any server) or went offline ' +
    '(their last one closed, or its server stopped answering: within about 4/3 of PRESENCE_TTL_SECONDS)',
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    user: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (e, _args, ctx) => personAsUser(ctx, e.user) }),
    online: t.exposeBoolean('online'),
  }),
});

builder.subscriptionFields((t) => ({
  roomPresence: t.field({
    type: PresenceChangedRef,
    description: "Participants only: others coming online and going offline in the room. Following it does not make you online; an open roomEvents feed does.",
    args: { roomName: t.arg.string({ required: true }) },
    subscribe: (_root, args, ctx) => presence.subscribeRoomPresence(ctx, args.roomName),
    extensions: sameForEveryViewer,
    resolve: (change: PresenceChange, _args, ctx) => presence.presenceEvent(ctx, change),
  }),
}));
