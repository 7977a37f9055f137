/**
 * Blocking in the messenger. Once a user blocks another, that other cannot
 * send them direct messages, and they cannot write to whoever they blocked
 * until they unblock (a conversation only one side may speak in is not one).
 * What was sent before stays. Every send reads the blocks between its two
 * people from storage, so a block holds on every server at once; a send
 * already past that read when the block is written is delivered.
 */
import type { Context } from '../context.js';
import type { UserRecord } from '../../db/accounts/users.js';
import type { Block } from '../../db/messenger/blocks.js';
import { AppError, ErrorCode, LimitName, limitReached } from '../../errors.js';
import { Limits } from '../../limits.js';
import { isPossibleLogin } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';
import { requirePartner } from './participants.js';
import { userLoader } from '../accounts/reads.js';

/** Blocks the user named `login`; blocking them again changes nothing. Returns them. */
export async function blockUser(ctx: Context, login: string): Promise<UserRecord> {
  const { viewer, partner } = await requirePartner(ctx, 'login', login);
  const { stores, clock } = ctx.services;
  // Blocked already (or by a twin request at once): its time is kept, and nothing more to do.
  if (!(await stores.blocks.addIfAbsent({ login: viewer.login, blocked: partner.login, blockedAt: clock.now() }))) return partner;
  // Counted once written, so blocks made at once cannot all slip under the limit: this one is taken back if over it.
  if ((await stores.blocks.countOf(viewer.login)) > Limits.messenger.maxBlocked) {
    await stores.blocks.remove(viewer.login, partner.login);
    throw limitReached(LimitName.BLOCKED_USERS, Limits.messenger.maxBlocked, `You may block at most ${Limits.messenger.maxBlocked} users; unblock someone first`);
  }
  return partner;
}

/** Unblocks the user named `login`; false when they were not blocked. */
export async function unblockUser(ctx: Context, login: string): Promise<boolean> {
  const { viewer, partner } = await requirePartner(ctx, 'login', login);
  const { stores } = ctx.services;
  const was = await stores.blocks.has(viewer.login, partner.login);
  if (was) await stores.blocks.remove(viewer.login, partner.login);
  return was;
}

/** The users the viewer blocked, by login. */
export async function blockedUsers(ctx: Context): Promise<UserRecord[]> {
  const viewer = requireViewer(ctx);
  const blocks = await ctx.services.stores.blocks.of(viewer.login, Limits.messenger.maxBlocked);
  const users = await userLoader(ctx).loadMany(blocks.map((b) => b.blocked));
  return users.filter((u): u is UserRecord => u !== null && !(u instanceof Error));
}

/** The blocks between the viewer and `partnerLogin` (none for a string that names nobody). */
export function blocksBetween(ctx: Context, viewerLogin: string, partnerLogin: string): Promise<Block[]> {
  if (!isPossibleLogin(partnerLogin) || partnerLogin === viewerLogin) return Promise.resolve([]);
  return ctx.services.stores.blocks.between(viewerLogin, partnerLogin);
}

/** Refuses a direct message from `from` when either of the two blocked the other. */
export function requireNotBlocked(blocks: Block[], from: string): void {
  if (blocks.some((b) => b.login === from)) {
    throw new AppError(ErrorCode.FORBIDDEN, 'You blocked this user: unblock them to write to them', { field: 'to' });
  }
  if (blocks.length > 0) throw new AppError(ErrorCode.FORBIDDEN, 'You cannot send messages to this user', { field: 'to' });
}
