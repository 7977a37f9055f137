/** markConversationRead: the read point, the write, the read receipt. */
import type { Context } from '../context.js';

import { publishInboxEvent } from './events.js';
import { requirePartner } from './participants.js';
import type { ConversationRecord } from '../../db/messenger/rows.js';

/**
 * Marks the conversation read up to its newest unread message (the read
 * point, returned as Conversation.readUpTo): every message sent at or before
 * it is read, every later one stays unread, even one that is being sent
 * concurrently. See cql/003_messenger.cql.
 */
export async function markConversationRead(ctx: Context, withLogin: string): Promise<ConversationRecord> {
  const { viewer, partner } = await requirePartner(ctx, 'with', withLogin);
  const { stores, clock } = ctx.services;
  const current = await stores.inbox.one(viewer.login, partner.login);
  const readPoint = current.newestUnread;
  if (!readPoint) {
    // Nothing unread: the last read point stands. one() reads the row and the
    // unread ids side by side, so a concurrent read's batch may show in the
    // ids (none left) before in the row (its read point not yet there). Read
    // once more: this second row read starts after that batch was seen.
    return stores.inbox.one(viewer.login, partner.login);
  }
  const readAt = clock.now();
  await stores.inbox.markRead(viewer.login, partner.login, readPoint, readAt);
  const receipt = { type: 'ConversationRead', reader: viewer.login, readAt, readUpTo: readPoint.toString() } as const;
  await Promise.all([
    // The read receipt for the partner, and the news for the reader's other devices.
    publishInboxEvent(ctx, { ...receipt, owner: partner.login, partner: viewer.login }),
    publishInboxEvent(ctx, { ...receipt, owner: viewer.login, partner: partner.login }),
  ]);
  // Read back: messages sent after the read point are already counted again.
  return stores.inbox.one(viewer.login, partner.login);
}
