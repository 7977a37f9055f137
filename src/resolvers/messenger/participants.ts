/**
 * Who a messenger operation is about. The logged-in user is always one of the
 * two participants: every conversation is addressed by the OTHER login, so no
 * argument can name a conversation the caller is not part of.
 */
import type { Context } from '../context.js';
import type { Session } from '../../auth/tokens.js';
import type { UserRecord } from '../../db/accounts/users.js';
import { badInput, notFound } from '../../errors.js';
import { existingUser, normalizeLogin } from '../accounts/accounts.js';
import { requireViewer } from '../shared/guards.js';
import { userLoader } from '../accounts/reads.js';

export interface Participants {
  viewer: Session;
  partner: UserRecord;
}

/** The viewer and the existing user named by `field`, who is not the viewer. */
export async function requirePartner(ctx: Context, field: string, login: string): Promise<Participants> {
  const viewer = requireViewer(ctx);
  const partnerLogin = normalizeLogin(login);
  if (partnerLogin === viewer.login) throw badInput(field, `${field} cannot be yourself`);
  // The user loader answers null for a string that cannot be a login.
  const partner = await userLoader(ctx).load(partnerLogin);
  if (!partner) throw notFound('User');
  return { viewer, partner };
}

/** A participant's account, for DirectMessage.from/to and Conversation.partner. */
export const participant = existingUser;
