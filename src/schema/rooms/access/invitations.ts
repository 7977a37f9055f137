/**
 * Invitations into a room: the RoomInvitation type, the invitee's list, and invite, accept, decline and revoke; and
 * invite links.
 */
import * as invitations from '../../../resolvers/rooms/access/invitations.js';
import * as inviteLinks from '../../../resolvers/rooms/access/invite-links.js';
import { Limits } from '../../../limits.js';
import { builder } from '../../shared/builder.js';
import { sameForEveryViewer } from '../../shared/viewer-dependent.js';
import { userLoader } from '../../../resolvers/accounts/reads.js';
import { UserRef } from '../../accounts/user.js';
import { RoomRef } from '../room.js';

export const RoomInvitationRef = builder.objectRef<invitations.RoomInvitation>('RoomInvitation').implement({
  description: 'An invitation into a room, waiting for its invitee to accept or decline it',
  fields: (t) => ({
    room: t.field({
      type: RoomRef,
      description: 'The room it invites into: its invitee sees it whatever its visibility',
      extensions: sameForEveryViewer,
      resolve: (i) => i.room,
    }),
    inviteeLogin: t.string({ resolve: (i) => i.invitation.inviteeLogin }),
    inviter: t.field({
      type: UserRef,
      nullable: true,
      description: 'Null when their account is gone',
      extensions: sameForEveryViewer,
      resolve: (i, _args, ctx) => userLoader(ctx).load(i.invitation.inviterLogin),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (i) => i.invitation.createdAt }),
  }),
});

const InviteLinkRef = builder.objectRef<inviteLinks.InviteLink>('InviteLink').implement({
  description: 'A token that lets whoever holds it into a room, until it expires or its uses run out',
  fields: (t) => ({
    token: t.string({ description: 'Shown once, to its maker: redeemInviteLink takes it', resolve: (l) => l.link.token }),
    room: t.field({ type: RoomRef, extensions: sameForEveryViewer, resolve: (l) => l.room }),
    maxUses: t.int({ resolve: (l) => l.link.maxUses }),
    uses: t.int({ resolve: (l) => inviteLinks.inviteLinkUses(l.link) }),
    expiresAt: t.field({ type: 'DateTime', resolve: (l) => l.link.expiresAt }),
  }),
});

builder.queryFields((t) => ({
  roomInvitations: t.field({
    type: [RoomInvitationRef],
    description: `The viewer's invitations waiting for an answer, newest first (at most ${Limits.room.maxPendingInvitations})`,
    complexity: { field: 1, multiplier: Limits.room.maxPendingInvitations },
    resolve: (_root, _args, ctx) => invitations.roomInvitationsOf(ctx),
  }),
}));

builder.mutationFields((t) => ({
  inviteToRoom: t.field({
    type: RoomInvitationRef,
    description:
      'Moderators, admins and the owner (members too, where the room grants INVITE) invite a person by login (again: no change). BAD_USER_INPUT (field login) for a ' +
      `participant; FORBIDDEN for someone banned (unban them first); LIMIT_REACHED (PENDING_INVITATIONS) when they ` +
      `have ${Limits.room.maxPendingInvitations} waiting; NOT_FOUND for no such user.`,
    args: { roomName: t.arg.string({ required: true }), login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => invitations.inviteToRoom(ctx, args.roomName, args.login),
  }),
  acceptInvitation: t.field({
    type: RoomRef,
    description:
      'Joins the room the viewer is invited to, public or private, and answers it. NOT_FOUND (Invitation) when there ' +
      'is no invitation: revoked, declined, or never sent. Retried after a lost answer, it finishes the same join.',
    args: { roomName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => invitations.acceptInvitation(ctx, args.roomName),
  }),
  declineInvitation: t.boolean({
    description: "Drops the viewer's pending invitation; false when there is none",
    args: { roomName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => invitations.declineInvitation(ctx, args.roomName),
  }),
  revokeInvitation: t.boolean({
    description:
      "Drops a person's pending invitation: its inviter's own, or anyone's for moderators, admins and the owner. NOT_FOUND " +
      '(Invitation) when there is none; CONFLICT when it was accepted first.',
    args: { roomName: t.arg.string({ required: true }), login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => invitations.revokeInvitation(ctx, args.roomName, args.login),
  }),
  createInviteLink: t.field({
    type: InviteLinkRef,
    description:
      `Moderators, admins and the owner (members too, where the room grants INVITE) make a link of 1 to ${Limits.room.inviteLink.maxUses} uses (BAD_USER_INPUT, field maxUses), ` +
      `lasting expiresInMinutes (${Limits.room.inviteLink.defaultMinutes} by default, at most ${Limits.room.inviteLink.maxMinutes}).`,
    args: {
      roomName: t.arg.string({ required: true }),
      maxUses: t.arg.int({ required: true }),
      expiresInMinutes: t.arg.int(),
    },
    resolve: (_root, args, ctx) => inviteLinks.createInviteLink(ctx, args.roomName, args.maxUses, args.expiresInMinutes),
  }),
  redeemInviteLink: t.field({
    type: RoomRef,
    description:
      'Enters the room a link lets into, public or private, taking one of its uses (none for a participant, who is ' +
      'answered the room). NOT_FOUND (Invite link) for an unknown, expired or revoked token; LIMIT_REACHED ' +
      '(INVITE_LINK_USES) once its uses are taken, each counted exactly; BANNED for someone banned from the room; ' +
      'CONFLICT, nothing taken, when many redeemed it at the same moment (try again).',
    args: { token: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => inviteLinks.redeemInviteLink(ctx, args.token),
  }),
  revokeInviteLink: t.boolean({
    description: 'Moderators, admins and the owner (members too, where the room grants INVITE) revoke a link to the room; false when there was none',
    args: { roomName: t.arg.string({ required: true }), token: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => inviteLinks.revokeInviteLink(ctx, args.roomName, args.token),
  }),
}));
