/** A conversation's messages, newest first, across month buckets. */
import type { Context } from '../../context.js';
import { TimeUuid } from '../../db/client.js';
import { conversationKey, type DirectMessageRecord } from '../../db/direct-message.js';
import type { ConversationRecord } from '../../db/inbox.js';
import { parseTimeUuid } from '../../db/timeuuids.js';
import { badInput, forbidden } from '../../errors.js';
import { connection, decodeCursor, encodeCursor, type Connection } from '../../pagination.js';
import { pageSize } from '../../validation.js';
import { requireViewer } from '../guards.js';

interface MessagePosition extends Record<string, unknown> {
  /** The conversation key: a cursor only pages the conversation it came from. */
  c: string;
  /** Month bucket (yyyyMM) and id of the last message returned. */
  m: number;
  id: string;
}

const isMessagePosition = (p: Record<string, unknown>): p is MessagePosition =>
  typeof p.c === 'string' && Number.isInteger(p.m) && typeof p.id === 'string' && parseTimeUuid(p.id) !== undefined;

const cursorOf = (m: DirectMessageRecord) => encodeCursor({ c: m.conversation, m: m.month, id: m.id });

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
  let months = conv.months;
  let before: { month: number; id: TimeUuid } | undefined;
  if (args.after) {
    const position = decodeCursor('after', args.after, isMessagePosition);
    if (position.c !== key) {
      // Someone else's conversation is forbidden; another of my own is just the wrong cursor.
      if (!position.c.split(':').includes(viewer.login)) throw forbidden('This cursor belongs to a conversation you are not part of');
      throw badInput('after', 'after is a cursor of another conversation');
    }
    before = { month: position.m, id: TimeUuid.fromString(position.id) };
    months = months.filter((m) => m <= position.m);
  }

  const messages: DirectMessageRecord[] = [];
  for (const month of months) {
    // One more than the page, to know whether another page follows.
    const wanted = first + 1 - messages.length;
    const olderThan = before?.month === month ? before.id : undefined;
    messages.push(...(await ctx.services.stores.directMessages.page(key, month, wanted, olderThan)));
    if (messages.length > first) break;
  }
  return connection(messages.slice(0, first), cursorOf, { hasNextPage: messages.length > first });
}
