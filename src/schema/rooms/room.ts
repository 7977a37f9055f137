import type { RoomRecord } from '../../db/rooms/rooms.js';
import * as rooms from '../../resolvers/rooms/rooms.js';
import * as messages from '../../resolvers/rooms/messages/messages.js';
import { distinctPeople, personAsUser } from '../../resolvers/rooms/people.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { roomMetadata } from '../../resolvers/rooms/moderation.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { UserRef } from '../accounts/user.js';
import { MessageConnection } from './message.js';
import './room-events.js';

export const RoomRef = builder.objectRef<RoomRecord>('Room');

export const RoomVisibilityEnum = builder.enumType('RoomVisibility', {
  description: 'Who may find and join a room',
  values: {
    PUBLIC: { description: 'Listed by rooms, and anyone joins' },
    ON_REQUEST: {
      description:
        "Listed by rooms; a person asks with requestToJoin, and a moderator's approval invites them (joinRoom answers FORBIDDEN)",
    },
    PRIVATE: {
      description:
        'Unlisted; a person enters by an invitation. To anyone who does not take part it answers as a room that does ' +
        'not exist, on every path (createRoom under its name excepted: ROOM_EXISTS, as names are global)',
    },
  } as const,
});

export const RoomKindEnum = builder.enumType('RoomKind', {
  description: 'What kind of room a room is: set when it is created, for good. Each kind sets defaults (visibility, what members may do) and some rules',
  values: {
    CHANNEL: { description: 'Public by default: listed, anyone joins. Every room made before kinds existed is one' },
    GROUP: { description: 'A small group conversation: private by default, and its members invite (memberPermissions INVITE)' },
    ANNOUNCEMENT: { description: 'Only its owner and admins post; everyone in it reads, reacts and votes' },
    LIVESTREAM: {
      description:
        'For rooms of many watchers: its live feed carries messages only (posted, edited, deleted, hidden, pinned), the room\'s ' +
        'deletion and removals. No typing (sendTyping and roomPresence answer BAD_USER_INPUT), no presence, no join or leave ' +
        'messages, and no reaction, poll or read events: those are read with queries',
    },
  } as const,
});

export const RoomMemberPermissionEnum = builder.enumType('RoomMemberPermission', {
  description: "An action a room lets its members do beyond the member role's (setRoomMemberPermissions)",
  values: {
    INVITE: { description: 'inviteToRoom, createInviteLink, revokeInviteLink (a GROUP is created with it)' },
    PIN: { description: 'pinMessage, unpinMessage' },
  } as const,
});

builder.node(RoomRef, {
  description: 'A chat room',
  id: { resolve: (r) => r.name, extensions: sameForEveryViewer },
  loadMany: (names, ctx) => rooms.roomNodes(ctx, names),
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Unique, case-insensitive (stored lowercase)' }),
    banner: t.exposeString('banner', { nullable: true }),
    metadata: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Custom data its admins or owner gave it (a JSON object; setRoomMetadata changes it); null when none',
      resolve: (r) => roomMetadata(r),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => r.createdAt }),
    visibility: t.field({ type: RoomVisibilityEnum, resolve: (r) => r.visibility }),
    kind: t.field({ type: RoomKindEnum, resolve: (r) => r.kind }),
    memberPermissions: t.field({
      type: [RoomMemberPermissionEnum],
      description: "What the room lets its members do beyond the member role's (docs/api.md has the matrix)",
      resolve: (r) => r.memberGrants,
    }),
    creator: t.field({ type: UserRef, extensions: sameForEveryViewer, resolve: (r, _args, ctx) => personAsUser(ctx, r.creator) }),
    participants: t.field({
      type: [UserRef],
      description: `From the room row itself: no query per participant. At most ${Limits.room.maxParticipants}.`,
      // Priced at the longest it can be (the default assumes 10), so what is selected on each participant counts in full.
      complexity: { field: 1, multiplier: Limits.room.maxParticipants },
      extensions: sameForEveryViewer,
      resolve: (r, _args, ctx) => distinctPeople(r.participants).map((p) => personAsUser(ctx, p)),
    }),
    participantCount: t.int({ resolve: (r) => distinctPeople(r.participants).length }),
    messages: t.field({
      type: MessageConnection,
      description:
        'Participants only. first/after: newest first, back in time. last/before: the messages newer than `before` ' +
        '(the oldest of the room without it), oldest first; continue with before: pageInfo.endCursor while ' +
        'pageInfo.hasPreviousPage. Catch-up shows messages up to now, but from the cursor of a message that had ' +
        'not settled when served (the last half minute, when a write with an earlier id may still land), it resumes ' +
        'from before that: it may repeat messages you have (key them by id) and never skips one. ' +
        `Page size ${Limits.page.default} by default, at most ${Limits.page.max}.`,
      args: { ...t.arg.connectionArgs() },
      // Participants only: FORBIDDEN for anyone else.
      extensions: readsViewer,
      resolve: (room, args, ctx) => messages.roomHistory(ctx, room, args),
    }),
  }),
});

export const RoomConnection = builder.connectionObject({
  type: RoomRef,
  name: 'RoomConnection',
});

const CreateRoomInput = builder.inputType('CreateRoomInput', {
  fields: (t) => ({
    name: t.string({
      required: true,
      description: "3–31 characters: a letter or digit, then letters, digits, '_', '.', '-'",
    }),
    banner: t.string({ description: `At most ${Limits.room.banner.max} characters` }),
    metadata: t.field({ type: 'JSON', description: `Custom data: a JSON object of at most ${Limits.metadata.maxBytes} bytes as JSON` }),
    kind: t.field({ type: RoomKindEnum, description: 'CHANNEL when left out' }),
    visibility: t.field({ type: RoomVisibilityEnum, description: "The kind's when left out: PRIVATE for a GROUP, PUBLIC for the others" }),
  }),
});

builder.objectFields(UserRef, (t) => ({
  chatRooms: t.field({
    type: [RoomRef],
    nullable: true,
    description: 'The rooms the user takes part in. Visible to the user only; null for everyone else.',
    extensions: readsViewer,
    resolve: (user, _args, ctx) => rooms.chatRoomsOf(ctx, user),
  }),
}));

builder.queryFields((t) => ({
  room: t.field({
    type: RoomRef,
    nullable: true,
    description: 'Null when no room has that name (a name no room could have included), or it is private and the viewer is not in it',
    args: { roomName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => rooms.roomByName(ctx, args.roomName),
  }),
  rooms: t.field({
    type: RoomConnection,
    description: 'Every public room, in storage order (private rooms are unlisted: the viewer finds theirs in User.chatRooms)',
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: (_root, args, ctx) => rooms.listRooms(ctx, args.first, args.after),
  }),
}));

builder.mutationFields((t) => ({
  createRoom: t.field({
    type: RoomRef,
    description: 'The creator becomes its first participant. A taken name gives ROOM_EXISTS.',
    args: { input: t.arg({ type: CreateRoomInput, required: true }) },
    resolve: (_root, args, ctx) => rooms.createRoom(ctx, args.input),
  }),
  joinRoom: t.field({
    type: RoomRef,
    description:
      'Joining twice is harmless. NOT_FOUND when the room does not exist (or was just deleted); ' +
      `LIMIT_REACHED (PARTICIPANTS_PER_ROOM) when it has ${Limits.room.maxParticipants} participants.`,
    args: { roomName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => rooms.joinRoom(ctx, args.roomName),
  }),
  leaveRoom: t.boolean({
    description: 'False when the user was not a participant',
    args: { roomName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => rooms.leaveRoom(ctx, args.roomName),
  }),
  deleteRoom: t.boolean({
    description:
      'Creator only. CONFLICT when participants kept changing during the deletion. Once it applies, the room is gone; ' +
      'its messages, their copies and the room lists that name it are removed after. Should that be cut short (a ' +
      'SERVICE_UNAVAILABLE answer, a server lost), a job on every server finishes it within a few minutes.',
    args: { roomName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => rooms.deleteRoom(ctx, args.roomName),
  }),
}));
