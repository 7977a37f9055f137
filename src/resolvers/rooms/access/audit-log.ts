/**
 * A room's audit log: what its moderators, admins and owner changed, appended as each change applies, and read by its
 * admins and owner, newest first.
 *
 * Rules:
 * - Every moderation and permission change that applied appends one entry: who did it (the viewer), to whom, when,
 *   why (the reason the actor gave, where the operation takes one) and what changed (`details`). A change refused or
 *   not applied appends nothing.
 * - An entry is written once, under an id made for it, and never changed. It outlives its room: a room deleted and made
 *   again under its name starts a log of its own (entries are kept by the room's incarnation), and the old one stays.
 * - The entry follows the change: should its write fail, the change stands and the failure is logged (an error, with
 *   the entry), so the log can miss a change, never hold one that did not apply.
 * - SEE_AUDIT_LOG (permissions.ts): admins and the owner read it; anyone else gets null.
 */
import type { Context } from '../../context.js';
import type { RoomHead, RoomRecord } from '../../../db/rooms/rooms.js';
import type { AuditEntryRecord } from '../../../db/rooms/audit-log.js';
import { badInput } from '../../../errors.js';
import { connection, decodeCursor, encodeCursor, type Connection } from '../../../pagination.js';
import { pageSize } from '../../../validation.js';
import { isTimeUuid, newTimeUuid } from '../../../timeuuids.js';
import { requireViewer } from '../../shared/guards.js';
import { may } from './permissions.js';

export const AUDIT_ACTIONS = [
  'ROLE_CHANGED',
  'OWNERSHIP_TRANSFERRED',
  'REMOVED',
  'BANNED',
  'UNBANNED',
  'MUTED',
  'SLOW_MODE_SET',
  'MESSAGE_HIDDEN',
  'MESSAGE_DELETED',
  'MESSAGE_PINNED',
  'MESSAGE_UNPINNED',
  'VISIBILITY_CHANGED',
  'MEMBER_PERMISSIONS_CHANGED',
  'ROOM_DATA_CHANGED',
  'INVITED',
  'INVITATION_REVOKED',
  'INVITE_LINK_CREATED',
  'INVITE_LINK_REVOKED',
  'JOIN_REQUEST_APPROVED',
  'JOIN_REQUEST_DECLINED',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The longest reason an actor may give. */
export const MAX_REASON = 500;

/** A reason as given: trimmed, null when blank; BAD_USER_INPUT (field reason) past MAX_REASON characters. */
export function validReason(reason: string | null | undefined): string | null {
  const text = reason?.trim() ?? '';
  if (text.length > MAX_REASON) throw badInput('reason', `A reason is at most ${MAX_REASON} characters`);
  return text === '' ? null : text;
}

/** Appends what the viewer just changed in `room` (applied). */
export async function recordAudit(
  ctx: Context,
  room: Pick<RoomHead, 'name' | 'createdAt'>,
  change: { action: AuditAction; target?: string | null; reason?: string | null; details?: string | null },
): Promise<void> {
  const entry: AuditEntryRecord = {
    roomName: room.name,
    roomCreatedAt: room.createdAt,
    entryId: newTimeUuid(ctx.services.clock.now()).toString(),
    action: change.action,
    actorLogin: requireViewer(ctx).login,
    targetLogin: change.target ?? null,
    reason: change.reason ?? null,
    details: change.details ?? null,
  };
  await ctx.services.stores.auditLog.append(entry).catch((err: unknown) => ctx.services.logger.error({ err, entry }, 'audit entry not written; the change stands'));
}

/** The room's audit log, newest first, for its admins and owner (null for anyone else). */
export async function auditLogOf(ctx: Context, room: RoomRecord, first: number | null | undefined, after: string | null | undefined): Promise<Connection<AuditEntryRecord> | null> {
  if (!may(room, requireViewer(ctx).login, 'SEE_AUDIT_LOG')) return null;
  const size = pageSize('first', first);
  const before = after ? decodeCursor('after', after, (p): p is { e: string } => typeof p.e === 'string' && isTimeUuid(p.e)).e : null;
  const rows = await ctx.services.stores.auditLog.page(room.name, room.createdAt, before, ctx.services.clock.now(), size + 1);
  return connection(rows.slice(0, size), (e) => encodeCursor({ e: e.entryId }), { hasNextPage: rows.length > size });
}
