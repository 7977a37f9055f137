import * as moderation from '../../resolvers/rooms/moderation.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { RoomRef } from './room.js';

const { moderation: limits } = Limits.room;

builder.objectFields(RoomRef, (t) => ({
  moderators: t.stringList({ description: 'Logins the creator named moderators', resolve: (room) => room.moderators }),
  slowModeSeconds: t.int({
    nullable: true,
    description: 'One message per this many seconds per participant (moderators exempt); null when off',
    resolve: (room) => room.slowModeSeconds,
  }),
}));

builder.mutationFields((t) => ({
  setRoomModerator: t.field({
    type: RoomRef,
    description: "The creator names a participant moderator (or takes it back). Publishes ModeratorChanged.",
    args: { name: t.arg.string({ required: true }), login: t.arg.string({ required: true }), moderator: t.arg.boolean({ required: true }) },
    resolve: (_root, args, ctx) => moderation.setModerator(ctx, args.name, args.login, args.moderator),
  }),
  removeParticipant: t.boolean({
    description:
      'The creator or a moderator removes a participant; with ban, they cannot join again until unbanned (BANNED), ' +
      'even by a join racing the ban. Only the creator acts on a moderator. Publishes ParticipantRemoved. False when ' +
      'they were not a participant (and no ban was asked).',
    args: { name: t.arg.string({ required: true }), login: t.arg.string({ required: true }), ban: t.arg.boolean({ defaultValue: false }) },
    resolve: (_root, args, ctx) => moderation.removeParticipant(ctx, args.name, args.login, args.ban ?? false),
  }),
  unbanFromRoom: t.boolean({
    description: 'Lifts a ban; false when the login was not banned',
    args: { name: t.arg.string({ required: true }), login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => moderation.unban(ctx, args.name, args.login),
  }),
  muteParticipant: t.boolean({
    description: `Mutes a participant for minutes (0 lifts it; at most ${limits.maxMuteMinutes}): their posts get MUTED. Publishes ParticipantMuted.`,
    args: { name: t.arg.string({ required: true }), login: t.arg.string({ required: true }), minutes: t.arg.int({ required: true }) },
    resolve: (_root, args, ctx) => moderation.muteParticipant(ctx, args.name, args.login, args.minutes),
  }),
  setSlowMode: t.field({
    type: RoomRef,
    description: `One message per seconds per participant, across instances (0 turns it off; at most ${limits.maxSlowModeSeconds}). Moderators are exempt. Publishes SlowModeChanged.`,
    args: { name: t.arg.string({ required: true }), seconds: t.arg.int({ required: true }) },
    resolve: (_root, args, ctx) => moderation.setSlowMode(ctx, args.name, args.seconds),
  }),
}));
