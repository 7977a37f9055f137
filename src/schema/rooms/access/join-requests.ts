/** Requests to join a room on request: the RoomJoinRequest type, the room's list, and ask, withdraw, approve and decline. */
import * as joinRequests from '../../../resolvers/rooms/access/join-requests.js';
import { Limits } from '../../../limits.js';
import { builder } from '../../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../../shared/viewer-dependent.js';
import { userLoader } from '../../../resolvers/accounts/reads.js';
import { UserRef } from '../../accounts/user.js';
import { RoomRef } from '../room.js';
import { RoomInvitationRef } from './invitations.js';

const RoomJoinRequestRef = builder.objectRef<joinRequests.RoomJoinRequest>('RoomJoinRequest').implement({
  description: "A person's request to join a room on request, waiting for a moderator's decision",
  fields: (t) => ({
    room: t.field({ type: RoomRef, extensions: sameForEveryViewer, resolve: (r) => r.room }),
    requester: t.field({
      type: UserRef,
      nullable: true,
      description: 'Null when their account is gone',
      extensions: sameForEveryViewer,
      resolve: (r, _args, ctx) => userLoader(ctx).load(r.request.requesterLogin),
    }),
    requesterLogin: t.string({ resolve: (r) => r.request.requesterLogin }),
    requestedAt: t.field({ type: 'DateTime', resolve: (r) => r.request.requestedAt }),
  }),
});

const RoomJoinRequestConnection = builder.connectionObject({ type: RoomJoinRequestRef, name: 'RoomJoinRequestConnection' });

builder.objectFields(RoomRef, (t) => ({
  joinRequests: t.field({
    type: RoomJoinRequestConnection,
    nullable: true,
    description:
      'For its moderators, admins and owner (null for anyone else): the requests to join waiting for a decision, by ' +
      `login. A request lives 30 days unless decided. A page may hold fewer than asked. Page size ${Limits.page.default} by default, at most ${Limits.page.max}.`,
    args: { first: t.arg.int(), after: t.arg.string() },
    extensions: readsViewer,
    resolve: (room, args, ctx) => joinRequests.joinRequestsOf(ctx, room, args.first, args.after),
  }),
  viewerJoinRequest: t.field({
    type: RoomJoinRequestRef,
    nullable: true,
    description: "The viewer's own request to join the room, while it waits for a decision; null otherwise",
    extensions: readsViewer,
    resolve: (room, _args, ctx) => joinRequests.viewerJoinRequest(ctx, room),
  }),
}));

builder.mutationFields((t) => ({
  requestToJoin: t.field({
    type: RoomJoinRequestRef,
    description:
      'Asks to join a room on request (asking again: no change). A moderator approves (an invitation, which you accept ' +
      'with acceptInvitation; RoomInvitationReceived tells you live) or declines. BANNED when banned from it; ' +
      'BAD_USER_INPUT (field roomName) when you take part or the room is not on request; LIMIT_REACHED ' +
      `(PENDING_JOIN_REQUESTS) when ${Limits.room.maxPendingJoinRequests} requests wait for a decision.`,
    args: { roomName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => joinRequests.requestToJoin(ctx, args.roomName),
  }),
  withdrawJoinRequest: t.boolean({
    description: 'Takes back your request to join the room; false when none was waiting',
    args: { roomName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => joinRequests.withdrawJoinRequest(ctx, args.roomName),
  }),
  approveJoinRequest: t.field({
    type: RoomInvitationRef,
    description:
      "Moderators, admins and the owner: invites the requester (inviteToRoom's rules). Of an approval and a decline " +
      'racing each other exactly one applies: the other answers NOT_FOUND, as does a request that is not waiting.',
    args: { roomName: t.arg.string({ required: true }), login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => joinRequests.approveJoinRequest(ctx, args.roomName, args.login),
  }),
  declineJoinRequest: t.boolean({
    description: 'Moderators, admins and the owner: the request goes (they may ask again). NOT_FOUND when it is not waiting.',
    args: { roomName: t.arg.string({ required: true }), login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => joinRequests.declineJoinRequest(ctx, args.roomName, args.login),
  }),
}));
