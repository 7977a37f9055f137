/**
 * The messenger's per-request reads: direct messages and one owner's conversations, in batches, cached for the
 * request alone. Each is keyed by what it reads, never by who asks: the callers authorize.
 */
import DataLoader from 'dataloader';
import type { ConversationRecord, DirectMessageRecord } from '../../db/messenger/rows.js';
import type { Context } from '../context.js';
import { groupBy, perRequest } from '../shared/per-request.js';
import { parseDirectMessageKey } from './model.js';

const DIRECT_MESSAGES = Symbol('direct messages');
const CONVERSATIONS = Symbol('conversations');

/** The key of `owner`'s view of the conversation with `partner` in conversationLoader (the owner first). */
export const inboxRowKey = (owner: string, partner: string) => `${owner}\u0000${partner}`;

/**
 * Direct messages by directMessageKey ("a:b:<timeuuid>"): those of one conversation are read together, one query
 * per month partition, the conversations side by side. A key that is none answers null.
 */
export function directMessageLoader(ctx: Context): DataLoader<string, DirectMessageRecord | null> {
  return perRequest(
    ctx,
    DIRECT_MESSAGES,
    ({ directMessages }) =>
      new DataLoader<string, DirectMessageRecord | null>(
        async (keys) => {
          const byConversation = groupBy(keys, (key) => {
            const parsed = parseDirectMessageKey(key);
            return parsed && ([parsed.conversation, parsed.id] as const);
          });
          const found = new Map<string, DirectMessageRecord>();
          await Promise.all(
            [...byConversation].map(async ([conversation, ids]) => {
              for (const [id, message] of await directMessages.byIds(conversation, ids)) found.set(`${conversation}:${id}`, message);
            }),
          );
          // Looked up as parsed: the timeuuid lower case, as the rows give it.
          return keys.map((key) => {
            const parsed = parseDirectMessageKey(key);
            return (parsed && found.get(`${parsed.conversation}:${parsed.id}`)) ?? null;
          });
        },
        { maxBatchSize: 100 },
      ),
  );
}

/**
 * Conversations by inboxRowKey(owner, partner), as the owner sees them (empty when the two never wrote to each
 * other): one read of an owner's inbox rows and one of their unread counts for a whole batch of partners.
 */
export function conversationLoader(ctx: Context): DataLoader<string, ConversationRecord> {
  return perRequest(
    ctx,
    CONVERSATIONS,
    ({ inbox }) =>
      new DataLoader<string, ConversationRecord>(
        async (keys) => {
          const byOwner = groupBy(keys, (key) => {
            const [owner, partner, ...rest] = key.split('\u0000');
            return owner && partner && rest.length === 0 ? ([owner, partner] as const) : null;
          });
          const found = new Map<string, ConversationRecord>();
          await Promise.all(
            [...byOwner].map(async ([owner, partners]) => {
              for (const [partner, conversation] of await inbox.some(owner, partners)) found.set(inboxRowKey(owner, partner), conversation);
            }),
          );
          return keys.map((key) => found.get(key) ?? new Error(`${JSON.stringify(key)} is not an inboxRowKey`));
        },
        { maxBatchSize: 100 },
      ),
  );
}
