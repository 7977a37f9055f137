/** A conversation's messages, newest first, across month buckets. */
import type { Context } from '../context.js';
import { conversationKey, parseDirectMessageKey } from './model.js';
import { directMessageLoader } from './reads.js';

import { badInput, forbidden } from '../../errors.js';
import { connection, decodeHistoryCursor, encodeHistoryCursor, type Connection } from '../../pagination.js';
import { pageSize } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';
import { eachVisibleOrNull } from '../shared/nodes.js';
import type { ConversationRecord, DirectMessageRecord } from '../../db/messenger/rows.js';

// The conversation key rides in the cursor: a cursor only pages the conversation it came from.
const cursorOf = (key: string) => (m: DirectMessageRecord) => encodeHistoryCursor({ bucket: m.month, id: m.id, scope: key });

/**
 * node(id:)'s direct messages, by key (directMessageKey): their sender and their recipient only. Read through the
 * request's loader: the messages of one conversation and month in one read.
 */
export function directMessageNodes(ctx: Context, keys: readonly string[]): Array<Promise<DirectMessageRecord | null>> {
  return eachVisibleOrNull(keys, async (key) => {
    const viewer = requireViewer(ctx);
    const parsed = parseDirectMessageKey(key);
    if (!parsed || !parsed.logins.includes(viewer.login)) return null;
    return directMessageLoader(ctx).load(key);
  });
}

/**
 * Walks the conversation's month buckets (listed in the viewer's inbox row)
 * newest first, reading each only as far as the page needs: a page costs one
 * query per bucket it touches, and never visits a month without messages.
 */
export async function conversationMessages(
  ctx: Context,
  conv: ConversationRecord,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<DirectMessageRecord>> {
  const viewer = requireViewer(ctx);
  // Conversation records are only ever loaded for their owner; never serve another user's.
  if (conv.owner !== viewer.login) throw forbidden();
  const first = pageSize('first', args.first);
  const key = conversationKey(conv.owner, conv.partner);
  const from = args.after ? decodeHistoryCursor('after', args.after, 'month') : null;
  if (from && from.scope !== key) {
    if (from.scope === undefined) throw badInput('after', 'after is not a valid cursor');
    // Someone else's conversation is forbidden; another of my own is just the wrong cursor.
    if (!from.scope.split(':').includes(viewer.login)) throw forbidden('This cursor belongs to a conversation you are not part of');
    throw badInput('after', 'after is a cursor of another conversation');
  }
  const page = await ctx.services.stores.directMessages.history(key, conv.months, from, first);
  return connection(page.rows, cursorOf(key), { hasNextPage: page.more });
}
