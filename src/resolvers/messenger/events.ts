/**
 * The live inbox feed: one pub/sub channel per user, so a subscriber only ever
 * receives its own events (the channel comes from the session, never from an
 * argument). Payloads are JSON: dates travel as strings.
 */
import { refreshLoaders, type Context } from '../../context.js';
import type { DirectMessageRecord } from './model.js';
import type { ConversationRecord } from './model.js';
import type { MessageRow } from '../../db/rooms/message-row.js';
import { forbidden } from '../../errors.js';
import { eventStream } from '../../pubsub/pubsub.js';
import { requireViewer } from '../shared/guards.js';

export const inboxChannel = (login: string) => `inbox.${login}`;

/** What travels on a user's inbox channel (`owner`), and what the InboxEvent union resolves from. */
export type InboxEvent = MessageReceivedEvent | ConversationReadEvent | MentionedEvent;
export interface MessageReceivedEvent {
  type: 'DirectMessageReceived';
  owner: string;
  message: DirectMessageRecord;
}
/** A room message mentions the owner (published by the rooms domain on the owner's feed). */
export interface MentionedEvent {
  type: 'Mentioned';
  owner: string;
  message: MessageRow;
}
export interface ConversationReadEvent {
  type: 'ConversationRead';
  owner: string;
  /** The other participant, from the owner's point of view. */
  partner: string;
  /** Who read: the partner (a read receipt) or the owner on another device. */
  reader: string;
  readAt: Date;
  readUpTo: string;
}

export async function publishInboxEvent(ctx: Context, event: InboxEvent): Promise<void> {
  const { pubsub, logger } = ctx.services;
  // The write already succeeded; a lost live event must not fail it (clients re-read the inbox on reconnect).
  await pubsub.publish(inboxChannel(event.owner), event).catch((err) => logger.error({ err }, 'failed to publish inbox event'));
}

export async function subscribeInbox(ctx: Context): Promise<AsyncIterable<InboxEvent>> {
  const viewer = requireViewer(ctx);
  return eventStream<InboxEvent>(ctx.services.pubsub, inboxChannel(viewer.login));
}

/** Turns a JSON payload back into typed values, with fresh loaders for this event. */
export function inboxEvent(ctx: Context, payload: InboxEvent): InboxEvent {
  // The channel is the viewer's own; never let a payload addressed to someone else through.
  if (payload.owner !== requireViewer(ctx).login) throw forbidden();
  refreshLoaders(ctx);
  if (payload.type === 'DirectMessageReceived') {
    const m = payload.message;
    return { ...payload, message: { ...m, createdAt: new Date(m.createdAt) } };
  }
  if (payload.type === 'Mentioned') return payload;
  return { ...payload, readAt: new Date(payload.readAt) };
}

/** The conversation an event is about, as the subscriber sees it now. */
export function eventConversation(ctx: Context, event: MessageReceivedEvent): Promise<ConversationRecord> {
  const viewer = requireViewer(ctx);
  const { sender, recipient } = event.message;
  return ctx.services.stores.inbox.one(viewer.login, sender === viewer.login ? recipient : sender);
}
