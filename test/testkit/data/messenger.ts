/** Helpers shared by the messenger tests: sending, reading whole histories, comparing message times. */
import type { App } from '../../../src/app.js';
import { TimeUuid } from '../../../src/db/cassandra/client.js';
import {
  ConversationMessagesDocument,
  SendDirectMessageDocument,
  type ConversationMessagesQuery,
} from '../../generated/graphql.js';
import { gqlOk } from '../http.js';
import type { TestUser } from './users.js';
import { keyOf } from '../ids.js';

export async function send(app: App, from: TestUser, to: TestUser | string, content: string) {
  const login = typeof to === 'string' ? to : to.login;
  return (await gqlOk(app, SendDirectMessageDocument, { to: login, content }, from.token)).sendDirectMessage;
}

/** A direct message's timeuuid, from its global id (or as it is, when bare). */
export const timeUuidOf = (id: string) => keyOf(id).split(':').at(-1)!;

/** A direct message's time in 100 ns ticks, from its id: the exact order of messages. */
export function ticksOf(id: string): bigint {
  const { date, ticks } = TimeUuid.fromString(timeUuidOf(id)).getDatePrecision();
  return BigInt(date.getTime()) * 10_000n + BigInt(ticks);
}

/** Every message of `viewer`'s conversation with `partner`, newest first, read page by page through the API. */
export async function wholeHistory(app: App, viewer: TestUser, partner: TestUser, pageSize = 50) {
  const messages: Array<{ id: string; content: string | null; createdAt: string; from: { login: string } }> = [];
  let after: string | null = null;
  let pages = 0;
  for (;;) {
    const data: ConversationMessagesQuery = await gqlOk(app, ConversationMessagesDocument, { with: partner.login, first: pageSize, after }, viewer.token);
    const page = data.conversation!.messages;
    messages.push(...page.edges.map((e) => e.node));
    pages += 1;
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor!;
  }
  return { messages, pages };
}
