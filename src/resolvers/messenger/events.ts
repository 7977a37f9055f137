/**
 * The live inbox feed: one pub/sub channel per user, so a subscriber only ever
 * receives its own events (the channel comes from the session, never from an
 * argument). Payloads are JSON: dates travel as strings.
 */
import { refreshLoaders, type Context } from '../context.js';

import type { MessageRecord } from '../../db/rooms/messages/message-row.js';
import { forbidden } from '../../errors.js';
import { eventStream, Interruption, type StreamRules } from '../../pubsub/pubsub.js';
import { requireViewer } from '../shared/guards.js';
import type { Clock } from '../../clock.js';
import type { ConversationRecord, DirectMessageRecord } from '../../db/messenger/rows.js';

export const inboxChannel = (login: string) => `inbox.${login}`;

/** What travels on a user's inbox channel (`owner`), and what the InboxEvent union resolves from. */
export type InboxEvent = MessageReceivedEvent | ConversationReadEvent | MentionedEvent | RoomInvitationReceivedEvent | InboxInterruptedEvent;
export interface MessageReceivedEvent {
  type: 'DirectMessageReceived';
  owner: string;
  message: DirectMessageRecord;
}
/** A room message mentions the owner (published by the rooms domain on the owner's feed). */
export interface MentionedEvent {
  type: 'Mentioned';
  owner: string;
  message: MessageRecord;
}
/** The owner is invited into a room (published by the rooms domain; the invitation is read again on delivery). */
export interface RoomInvitationReceivedEvent {
  type: 'RoomInvitationReceived';
  owner: string;
  roomName: string;
  /** When it was sent: the invitation delivered is this one, not a later one to the same room. */
  invitedAt: Date;
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

/**
 * Pub/sub was interrupted: live events since `interruptedAt` may never have
 * reached this subscription (made by the stream itself, never published).
 */
export interface InboxInterruptedEvent {
  type: 'InboxInterrupted';
  owner: string;
  interruptedAt: Date;
}

export async function publishInboxEvent(ctx: Context, event: InboxEvent): Promise<void> {
  const { pubsub, logger } = ctx.services;
  // The write already succeeded; a lost live event must not fail it (subscribers are told to re-read: InboxInterrupted).
  await pubsub.publish(inboxChannel(event.owner), event).catch((err) => logger.error({ err }, 'failed to publish inbox event'));
}

export async function subscribeInbox(ctx: Context): Promise<AsyncIterable<InboxEvent>> {
  const viewer = requireViewer(ctx);
  return eventStream<InboxEvent>(ctx.services.pubsub, inboxChannel(viewer.login), new InboxFeed(viewer.login, ctx.services.clock));
}

/** The rules of one inboxEvents stream: events as they come, and a marker once delivery is back after an interruption. */
class InboxFeed implements StreamRules<InboxEvent, InboxEvent> {
  private readonly interruption = new Interruption();

  constructor(
    private readonly owner: string,
    private readonly clock: Clock,
  ) {}

  deliveryChanged(live: boolean, lostSince?: Date): InboxInterruptedEvent | undefined {
    const interruptedAt = this.interruption.changed(live, lostSince, this.clock.now());
    return interruptedAt && { type: 'InboxInterrupted', owner: this.owner, interruptedAt };
  }
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
  if (payload.type === 'Mentioned' || payload.type === 'InboxInterrupted') return payload;
  if (payload.type === 'RoomInvitationReceived') return { ...payload, invitedAt: new Date(payload.invitedAt) };
  return { ...payload, readAt: new Date(payload.readAt) };
}

/** The conversation an event is about, as the subscriber sees it now. */
export function eventConversation(ctx: Context, event: MessageReceivedEvent): Promise<ConversationRecord> {
  const viewer = requireViewer(ctx);
  const { sender, recipient } = event.message;
  return ctx.services.stores.inbox.one(viewer.login, sender === viewer.login ? recipient : sender);
}
