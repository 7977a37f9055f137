/** A room's audit log: the RoomAuditEntry type and Room.auditLog, for its admins and owner. */
import * as auditLog from '../../../resolvers/rooms/access/audit-log.js';
import type { AuditEntryRecord } from '../../../db/rooms/audit-log.js';
import { Limits } from '../../../limits.js';
import { timeUuidDate } from '../../../timeuuids.js';
import { builder } from '../../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../../shared/viewer-dependent.js';
import { userLoader } from '../../../resolvers/accounts/reads.js';
import { UserRef } from '../../accounts/user.js';
import { RoomRef } from '../room.js';

const RoomAuditActionEnum = builder.enumType('RoomAuditAction', {
  description: 'What a moderation or permission change in a room did',
  values: auditLog.AUDIT_ACTIONS,
});

const RoomAuditEntryRef = builder.objectRef<AuditEntryRecord>('RoomAuditEntry').implement({
  description: 'One change in a room, as its audit log keeps it: appended when it applied, never changed',
  fields: (t) => ({
    action: t.field({ type: RoomAuditActionEnum, resolve: (e) => e.action as auditLog.AuditAction }),
    at: t.field({ type: 'DateTime', resolve: (e) => timeUuidDate(e.entryId) }),
    actorLogin: t.string({ resolve: (e) => e.actorLogin }),
    actor: t.field({ type: UserRef, nullable: true, description: 'Null when their account is gone', extensions: sameForEveryViewer, resolve: (e, _args, ctx) => userLoader(ctx).load(e.actorLogin) }),
    targetLogin: t.string({ nullable: true, description: 'Whom it was done to; null for a change of the room itself', resolve: (e) => e.targetLogin }),
    reason: t.string({ nullable: true, description: 'The reason the actor gave, where the operation takes one', resolve: (e) => e.reason }),
    details: t.string({
      nullable: true,
      description: 'What changed, in a few words: a role ("MEMBER to MODERATOR"), a visibility, a duration, a message id',
      resolve: (e) => e.details,
    }),
  }),
});

const RoomAuditEntryConnection = builder.connectionObject({ type: RoomAuditEntryRef, name: 'RoomAuditEntryConnection' });

builder.objectFields(RoomRef, (t) => ({
  auditLog: t.field({
    type: RoomAuditEntryConnection,
    nullable: true,
    description:
      'For its admins and owner (null for anyone else): every moderation and permission change, newest first. ' +
      `Page size ${Limits.page.default} by default, at most ${Limits.page.max}.`,
    args: { first: t.arg.int(), after: t.arg.string() },
    extensions: readsViewer,
    resolve: (room, args, ctx) => auditLog.auditLogOf(ctx, room, args.first, args.after),
  }),
}));
