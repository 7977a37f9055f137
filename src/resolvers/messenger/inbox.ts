/** The inbox (conversations) and one conversation, as the logged-in user sees them. */
import type { Context } from '../context.js';
import { conversationKey, directMessageKey } from './model.js';
import { globalId } from '../shared/global-ids.js';

import { Limits } from '../../limits.js';
import { connection, decodeCursor, encodeCursor, type Connection } from '../../pagination.js';
import { pageSize } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';
import { eachVisibleOrNull } from '../shared/nodes.js';
import { requirePartner } from './participants.js';
import { conversationLoader, inboxRowKey } from './reads.js';
import type { ConversationRecord } from '../../db/messenger/rows.js';

interface InboxPosition extends Record<string, unknown> {
  /** Last message time of the conversation at the cursor, in 100 ns ticks (a decimal string). */
  t: string;
  p: string;
}

const isInboxPosition = (p: Record<string, unknown>): p is InboxPosition =>
  typeof p.t === 'string' && /^\d{1,20}$/.test(p.t) && typeof p.p === 'string';

/** Most recent conversation first; the partner breaks ties so the order is total. */
function newerFirst(a: ConversationRecord, b: ConversationRecord): number {
  if (a.lastMessageTicks !== b.lastMessageTicks) return a.lastMessageTicks! > b.lastMessageTicks! ? -1 : 1;
  return a.partner < b.partner ? -1 : a.partner > b.partner ? 1 : 0;
}

function isAfter(c: ConversationRecord, pos: InboxPosition): boolean {
  const t = BigInt(pos.t);
  return c.lastMessageTicks! < t || (c.lastMessageTicks === t && c.partner > pos.p);
}

/** A conversation's key: the two logins in sorted order, whoever looks at it. */
export const conversationId = (c: ConversationRecord) => conversationKey(c.owner, c.partner);

/** A read point (a timeuuid of the conversation between owner and partner) as the global id of its message. */
export const readPointId = (c: { owner: string; partner: string }, readPoint: string | null): string | null =>
  readPoint === null ? null : globalId('DirectMessage', directMessageKey(c.owner, c.partner, readPoint));

/**
 * The logged-in user's inbox, most recent conversation first. Each page is cut
 * from ONE read of the user's inbox partition (sorting by recency needs all of
 * it; that is the seed's "one query" main view).
 */
export async function conversations(
  ctx: Context,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<ConversationRecord>> {
  const viewer = requireViewer(ctx);
  const first = pageSize('first', args.first, Limits.messenger.inboxPage);
  const position = args.after ? decodeCursor('after', args.after, isInboxPosition) : undefined;
  const all = (await ctx.services.stores.inbox.all(viewer.login)).filter((c) => c.lastMessageTicks !== null).sort(newerFirst);
  let start = position ? all.findIndex((c) => isAfter(c, position)) : 0;
  if (start < 0) start = all.length;
  const page = all.slice(start, start + first);
  return connection(page, (c) => encodeCursor({ t: c.lastMessageTicks!.toString(), p: c.partner }), {
    hasNextPage: start + first < all.length,
  });
}

/**
 * node(id:)'s conversations, by key ("a:b"): one of the two only, as with conversation(with:). Read through the
 * request's loaders: the partners' accounts in one read, the viewer's inbox rows and unread counts in one each.
 */
export function conversationNodes(ctx: Context, keys: readonly string[]): Array<Promise<ConversationRecord | null>> {
  return eachVisibleOrNull(keys, async (key) => {
    const viewer = requireViewer(ctx);
    const logins = key.split(':');
    if (logins.length !== 2 || conversationKey(logins[0]!, logins[1]!) !== key || !logins.includes(viewer.login)) return null;
    const { partner } = await requirePartner(ctx, 'with', logins[0] === viewer.login ? logins[1]! : logins[0]!);
    return conversationLoader(ctx).load(inboxRowKey(viewer.login, partner.login));
  });
}

/** The conversation with `with` (empty when the two never wrote to each other). */
export async function conversation(ctx: Context, withLogin: string): Promise<ConversationRecord> {
  const { viewer, partner } = await requirePartner(ctx, 'with', withLogin);
  return ctx.services.stores.inbox.one(viewer.login, partner.login);
}
