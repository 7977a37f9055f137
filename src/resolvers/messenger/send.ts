/** sendDirectMessage: validation, blocks, the one-batch write, the live event. */
import type { Context } from '../context.js';
import { conversationKey, directMessage } from './model.js';
import { newTimeUuid } from '../../timeuuids.js';
import { recordIdFor } from '../idempotency/run.js';
import { Limits } from '../../limits.js';
import { requireLength } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';
import { publishInboxEvent } from './events.js';
import { requirePartner } from './participants.js';
import { blocksBetween, requireNotBlocked } from './blocks.js';
import { normalizeLogin } from '../accounts/accounts.js';
import type { DirectMessageRecord } from '../../db/messenger/rows.js';

/** Sends `content` to `to`; `forwardedFrom` is the id of a room message it forwards (checked by forwarding.ts). */
export async function sendDirectMessage(ctx: Context, to: string, content: string, forwardedFrom: string | null = null): Promise<DirectMessageRecord> {
  const viewer = requireViewer(ctx);
  const { min, max } = Limits.messenger.content;
  const text = requireLength('content', content.trim(), min, max);
  // Read at once: who the partner is, and whether either of the two blocked the other.
  const [{ partner }, blocks] = await Promise.all([requirePartner(ctx, 'to', to), blocksBetween(ctx, viewer.login, normalizeLogin(to))]);
  requireNotBlocked(blocks, viewer.login);
  const { clock, stores } = ctx.services;
  // The id's time is the message time: from the injectable clock, so tests can write into past months.
  // Under an idempotency key, the id (and so the time) is the key's: a run again after an unknown outcome writes the same cells.
  const id = recordIdFor(ctx, () => newTimeUuid(clock.now(), 'microsecond'));
  const message = { ...directMessage(id, viewer.login, partner.login, text), forwardedFrom };
  await stores.directMessages.send(conversationKey(viewer.login, partner.login), message);
  await publishInboxEvent(ctx, { type: 'DirectMessageReceived', owner: partner.login, message });
  return message;
}
