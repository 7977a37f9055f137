/** Moderation: roles, moderators, bans, mutes and slow mode, on the Room type and as mutations. */
import * as moderation from '../../resolvers/rooms/moderation.js';
import * as rooms from '../../resolvers/rooms/rooms.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { UserRef } from '../accounts/user.js';
import { RoomMemberPermissionEnum, RoomRef, RoomVisibilityEnum } from './room.js';
import { userLoader } from '../../resolvers/accounts/reads.js';

type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;
const { moderation: limits } = Limits.room;

/** Who a ban or a mute is about: their login, and their account when there is one. */
const personFields = <T extends { login: string }>(t: PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, T>) => ({
  login: t.string({ resolve: (entry) => entry.login }),
  user: t.field({
    type: UserRef,
    nullable: true,
    description: 'Null when no account has this login',
    extensions: sameForEveryViewer,
    resolve: (entry, _args, ctx) => userLoader(ctx).load(entry.login),
  }),
});

const RoomBanRef = builder.objectRef<moderation.RoomBan>('RoomBan').implement({
  description: 'Someone banned from a room: they cannot join it again until unbanned',
  fields: (t) => ({
    ...personFields(t),
    bannedAt: t.field({ type: 'DateTime', resolve: (ban) => ban.bannedAt }),
  }),
});

const RoomMuteRef = builder.objectRef<moderation.RoomMute>('RoomMute').implement({
  description: 'A participant muted in a room: their posts and edits are refused with MUTED until mutedUntil',
  fields: (t) => ({
    ...personFields(t),
    mutedUntil: t.field({ type: 'DateTime', resolve: (mute) => mute.mutedUntil }),
  }),
});

const RoomBanConnection = builder.connectionObject({ type: RoomBanRef, name: 'RoomBanConnection' });
const RoomMuteConnection = builder.connectionObject({ type: RoomMuteRef, name: 'RoomMuteConnection' });

const RoomRoleRef = builder.enumType('RoomRole', {
  description: "A person's role in a room: what they may do there (docs/api.md, \"Roles and permissions\")",
  values: {
    OWNER: { description: 'Its creator, or whom the ownership passed to: everything a moderator may do, and pins, room data, roles and deletion' },
    ADMIN: { description: 'A participant the owner named: everything a moderator may do, and pins, room data and roles below their own' },
    MODERATOR: { description: 'A participant named by the owner or an admin: removes, bans and mutes those below, sets slow mode, invites' },
    MEMBER: { description: 'Any other participant: posts and reacts' },
    GUEST: { description: 'A participant named a guest: reads, and neither posts nor reacts' },
  } as const,
});

builder.objectFields(RoomRef, (t) => ({
  owner: t.field({
    type: UserRef,
    nullable: true,
    description:
      'Its owner: its creator until transferRoomOwnership, or the owner leaving, hands it on (to the first by login ' +
      'of the other participants of the highest role). Null when their account is gone.',
    extensions: sameForEveryViewer,
    resolve: (room, _args, ctx) => userLoader(ctx).load(room.ownerLogin),
  }),
  viewerRole: t.field({
    type: RoomRoleRef,
    nullable: true,
    description: "The viewer's role in this room: OWNER for its owner, taking part or not; null for anyone else who does not take part",
    extensions: readsViewer,
    resolve: (room, _args, ctx) => moderation.viewerRole(ctx, room),
  }),
  bannedParticipants: t.field({
    type: RoomBanConnection,
    nullable: true,
    description: `For the owner, admins and moderators (null for anyone else): who is banned, by login. Page size ${Limits.page.default} by default, at most ${Limits.page.max}.`,
    args: { first: t.arg.int(), after: t.arg.string() },
    extensions: readsViewer,
    resolve: (room, args, ctx) => moderation.bannedParticipants(ctx, room, args.first, args.after),
  }),
  mutedParticipants: t.field({
    type: RoomMuteConnection,
    nullable: true,
    description: `For the owner, admins and moderators (null for anyone else): who is muted now and until when, by login. Page size ${Limits.page.default} by default, at most ${Limits.page.max}.`,
    args: { first: t.arg.int(), after: t.arg.string() },
    extensions: readsViewer,
    resolve: (room, args, ctx) => moderation.mutedParticipants(ctx, room, args.first, args.after),
  }),
  viewerMutedUntil: t.field({
    type: 'DateTime',
    nullable: true,
    description: 'Until when a moderator muted the viewer in this room; null when they are not muted',
    extensions: readsViewer,
    resolve: (room, _args, ctx) => moderation.viewerMutedUntil(ctx, room),
  }),
  moderators: t.stringList({
    description: 'Logins of the participants named moderators (leaving, removal, a ban or a new join ends it)',
    resolve: (room) => moderation.currentModerators(room),
  }),
  slowModeSeconds: t.int({
    nullable: true,
    description: 'One message per this many seconds per participant (moderators exempt); null when off',
    resolve: (room) => room.slowModeSeconds,
  }),
}));

builder.mutationFields((t) => ({
  setRoomModerator: t.field({
    type: RoomRef,
    description: "Names a participant moderator (or takes it back): setRoomRole MODERATOR (or MEMBER). Publishes ModeratorChanged.",
    args: { roomName: t.arg.string({ required: true }), login: t.arg.string({ required: true }), moderator: t.arg.boolean({ required: true }) },
    resolve: (_root, args, ctx) => moderation.setModerator(ctx, args.roomName, args.login, args.moderator),
  }),
  removeParticipant: t.field({
    type: RoomRef,
    description:
      'The owner, an admin or a moderator removes a participant below them; with ban, they cannot join again until unbanned (BANNED), ' +
      'even by a join racing the ban. Whoever is removed loses their role. ' +
      'Publishes ParticipantRemoved. Answers the room as it is after (unchanged when they were not a participant ' +
      'and no ban was asked).',
    args: {
      roomName: t.arg.string({ required: true }),
      login: t.arg.string({ required: true }),
      ban: t.arg.boolean({ defaultValue: false }),
      reason: t.arg.string({ description: 'Why, for the room\'s audit log (at most 500 characters)' }),
    },
    resolve: (_root, args, ctx) => moderation.removeParticipant(ctx, args.roomName, args.login, args.ban ?? false, args.reason),
  }),
  unbanFromRoom: t.field({
    type: RoomRef,
    description: 'Lifts a ban (none: nothing changes). Answers the room as it is after.',
    args: { roomName: t.arg.string({ required: true }), login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => moderation.unban(ctx, args.roomName, args.login),
  }),
  muteParticipant: t.field({
    type: RoomRef,
    description: `Mutes a participant for minutes (0 lifts it; at most ${limits.maxMuteMinutes}): their posts get MUTED. Publishes ParticipantMuted. Answers the room as it is after.`,
    args: { roomName: t.arg.string({ required: true }), login: t.arg.string({ required: true }), minutes: t.arg.int({ required: true }), reason: t.arg.string({ description: 'Why, for the room\'s audit log (at most 500 characters)' }) },
    resolve: (_root, args, ctx) => moderation.muteParticipant(ctx, args.roomName, args.login, args.minutes, args.reason),
  }),
  setSlowMode: t.field({
    type: RoomRef,
    description: `One message per seconds per participant, across instances (0 turns it off; at most ${limits.maxSlowModeSeconds}). Moderators are exempt. Publishes SlowModeChanged.`,
    args: { roomName: t.arg.string({ required: true }), seconds: t.arg.int({ required: true }) },
    resolve: (_root, args, ctx) => moderation.setSlowMode(ctx, args.roomName, args.seconds),
  }),
  setRoomMetadata: t.field({
    type: RoomRef,
    description:
      `The room's custom data: a JSON object of at most ${Limits.metadata.maxBytes} bytes as JSON, or null to clear it ` +
      '(BAD_USER_INPUT, field metadata, otherwise, and when left out). Admins and the owner. Publishes RoomMetadataChanged.',
    args: { roomName: t.arg.string({ required: true }), metadata: t.arg({ type: 'JSON' }) },
    resolve: (_root, args, ctx) => moderation.setRoomMetadata(ctx, args.roomName, args.metadata),
  }),
  setRoomRole: t.field({
    type: RoomRef,
    description:
      "Gives a participant a role below the actor's: admins give MODERATOR, MEMBER and GUEST to those below them, the " +
      'owner any role but OWNER (BAD_USER_INPUT, field role: transferRoomOwnership hands the room on). FORBIDDEN below ' +
      'ADMIN, or on someone not below the actor; BAD_USER_INPUT (field login) for someone not taking part.',
    args: { roomName: t.arg.string({ required: true }), login: t.arg.string({ required: true }), role: t.arg({ type: RoomRoleRef, required: true }) },
    resolve: (_root, args, ctx) => moderation.setRoomRole(ctx, args.roomName, args.login, args.role),
  }),
  transferRoomOwnership: t.field({
    type: RoomRef,
    description:
      'The owner hands the room to a participant, who becomes its OWNER (and stops being a moderator); the former ' +
      'owner stays as a member. FORBIDDEN for anyone else; BAD_USER_INPUT (field login) for someone not taking part.',
    args: { roomName: t.arg.string({ required: true }), login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => rooms.transferRoomOwnership(ctx, args.roomName, args.login),
  }),
  setRoomVisibility: t.field({
    type: RoomRef,
    description:
      'Who may find and join the room (see RoomVisibility). Admins and the owner. Made PRIVATE, the room is unlisted and, to ' +
      'anyone who does not take part, answers as a room that does not exist; its participants stay.',
    args: { roomName: t.arg.string({ required: true }), visibility: t.arg({ type: RoomVisibilityEnum, required: true }) },
    resolve: (_root, args, ctx) => moderation.setRoomVisibility(ctx, args.roomName, args.visibility),
  }),
  setRoomMemberPermissions: t.field({
    type: RoomRef,
    description:
      "What the room lets its members do beyond the member role's: the whole list, replacing the one before (empty: " +
      'nothing more). Admins and the owner. CONFLICT when who holds authority in the room changed meanwhile.',
    args: {
      roomName: t.arg.string({ required: true }),
      permissions: t.arg({ type: [RoomMemberPermissionEnum], required: true }),
    },
    resolve: (_root, args, ctx) => moderation.setRoomMemberPermissions(ctx, args.roomName, args.permissions),
  }),
}));
