/**
 * Mentions: `@login` in a message's content names a participant. Parsed when
 * the message is posted or edited, against the room's participants as read
 * for that post: an unknown login or a non-participant stays plain text. Each
 * person newly mentioned gets a Mentioned event on their own live feed (the
 * inbox's, one channel per user).
 */
import type { Context } from '../../context.js';

import { Limits } from '../../../limits.js';
import { publishInboxEvent } from '../../messenger/events.js';
import type { ChatUser } from '../../../db/rooms/chat-user.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';

/**
 * `@` then login characters, not preceded by a word character, '@' or '.'
 * (so an e-mail address mentions nobody). A login may end in '.', but a
 * sentence ends in one too: "@bob." mentions bob when no "bob." takes part.
 */
const MENTION = /(?<![\p{L}\p{N}_@.])@([A-Za-z0-9._-]+)/gu;
/** The same, without the global flag's lastIndex (which matchAll would start from). */
const ANY_MENTION = new RegExp(MENTION.source, 'u');

/** Whether `content` holds anything that could mention someone: only then are a room's participants all needed. */
export function mayMention(content: string): boolean {
  return ANY_MENTION.test(content);
}

/** The `participants` that `content` mentions, in order of first mention, at most Limits.room.maxMentions. */
export function mentionedParticipants(participants: readonly ChatUser[], content: string): ChatUser[] {
  const byLogin = new Map(participants.map((p) => [p.login, p]));
  const found = new Map<string, ChatUser>();
  for (const match of content.matchAll(MENTION)) {
    const raw = match[1]!.toLowerCase();
    const person = byLogin.get(raw) ?? byLogin.get(raw.replace(/\.+$/, ''));
    if (person && !found.has(person.login)) found.set(person.login, person);
    if (found.size >= Limits.room.maxMentions) break;
  }
  return [...found.values()];
}

/**
 * Tells each of `people` (but the author) that `message` mentions them. The
 * message is stored already: a lost event loses no data (the message lists
 * its mentions), so a failed publish is logged, not thrown.
 */
export async function publishMentions(ctx: Context, message: MessageRecord, people: ChatUser[]): Promise<void> {
  await Promise.all(
    people
      .filter((p) => p.login !== message.author.login)
      .map((p) => publishInboxEvent(ctx, { type: 'Mentioned', owner: p.login, message })),
  );
}
