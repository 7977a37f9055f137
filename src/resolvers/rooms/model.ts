/**
 * The rules of a room's records: the person shown as an author or
 * participant, how a message is made (its id fixes its place in history and
 * in the feed), and how long after its id's time it may still commit, which
 * catch-up and clientMessageId claims both rely on. The records themselves
 * live where their rows are read, in src/db/rooms/.
 */
import type { RoomIncarnation } from '../../db/rooms/messages/room-messages.js';
import { postedMessage, type MessageRecord, type PollDefinition } from '../../db/rooms/messages/message-row.js';
import type { ChatUser } from '../../db/rooms/chat-user.js';
import { newTimeUuid, timeUuidDate } from '../../timeuuids.js';
import { dayBucket } from '../../buckets.js';
import { Limits } from '../../limits.js';
import { messageTerms } from './messages/search-terms.js';

/** What a post adds to its text: a thread, mentions, a poll, the message it forwards. */
export interface MessageExtras {
  replyTo?: string | null;
  mentions?: ChatUser[];
  poll?: PollDefinition | null;
  forwardedFrom?: string | null;
  /** Custom data, as validated JSON text. */
  metadata?: string | null;
  /** The ids of the files it carries (attached by the caller). */
  attachments?: string[];
}

/** Only the three fields: anything more would fail to encode as a chat_user. */
export function chatUser(user: { login: string; firstname: string; lastname: string }): ChatUser {
  return { login: user.login, firstname: user.firstname, lastname: user.lastname };
}

/**
 * A new message with a fresh id at `at`. Make it right after taking the room's
 * turn (see rooms/feed.ts): the id fixes its place in history and in the feed.
 */
export function newMessage(
  room: RoomIncarnation,
  at: Date,
  author: ChatUser,
  content: string,
  systemMessage: boolean,
  extras: MessageExtras = {},
): MessageRecord {
  return messageWithId(room, newTimeUuid(at).toString(), author, content, systemMessage, extras);
}

/**
 * A message with a given id (taken earlier, e.g. by a clientMessageId claim): its bucket is its id's day.
 * Every new message is made here, so every new message carries its search terms; what it does not say starts as
 * postedMessage (src/db/rooms/messages/message-row.ts) has it, the one home of a new message's defaults.
 */
export function messageWithId(
  room: RoomIncarnation,
  messageId: string,
  author: ChatUser,
  content: string,
  systemMessage: boolean,
  extras: MessageExtras = {},
): MessageRecord {
  const said = Object.fromEntries(Object.entries(extras).filter(([, value]) => value !== undefined)) as MessageExtras;
  return postedMessage({
    ...said,
    roomName: room.name,
    bucket: dayBucket(timeUuidDate(messageId)),
    messageId,
    author,
    content,
    systemMessage,
    terms: messageTerms(content, systemMessage),
  });
}

/**
 * How long after its id's time a message can still commit: its write is sent
 * only while the id is younger than the write window (Limits.room), and ends,
 * applied or failed, within one Cassandra request timeout after that.
 */
export function commitHorizonMs(requestTimeoutMs: number): number {
  return Limits.room.messageWriteWindowMs + requestTimeoutMs;
}

/**
 * How old a message must be before it has settled: the commit horizon, plus
 * the clock skew between the instance that made an id and the one reading. By
 * then every message with an earlier id has committed or never will. Catch-up
 * shows newer messages too, but a cursor at an unsettled message resumes from
 * this horizon, so a client stepping past it never leaves an older one behind.
 * Derived from the request timeout so it stays above it when
 * CASSANDRA_REQUEST_TIMEOUT_MS changes (27 s by default).
 */
export function catchUpSettleMs(requestTimeoutMs: number): number {
  return commitHorizonMs(requestTimeoutMs) + Limits.room.clockSkewMs;
}
