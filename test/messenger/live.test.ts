/**
 * The inbox feed (inboxEvents) over graphql-ws, across two instances sharing
 * Redis: messages and read receipts reach every connection of their user, and
 * no one else's.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { inboxChannel } from '../../src/resolvers/messenger/events.js';
import {
  ConversationDocument,
  ConversationMessagesDocument,
  ConversationsDocument,
  InboxEventsDocument,
  MarkConversationReadDocument,
  type InboxEventsSubscription,
} from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { eventually } from '../testkit/poll.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { subscribe, wsClient, type Subscription, type WsClient } from '../testkit/ws.js';
import { send } from '../testkit/data/messenger.js';

let app1: App;
let app2: App;
beforeAll(async () => {
  // Two instances sharing Redis: events must cross between them.
  [app1, app2] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
});

const clients: WsClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
});

/** `user`'s inbox feed on `app`, live (listening on that instance) when this resolves. */
async function inboxFeed(app: App, user: TestUser): Promise<Subscription<InboxEventsSubscription>> {
  const client = wsClient(app, user.token);
  clients.push(client);
  const before = app.services.pubsub.listeners(inboxChannel(user.login));
  const sub = subscribe(client, InboxEventsDocument);
  await eventually(() => app.services.pubsub.listeners(inboxChannel(user.login)) > before, {
    what: `${user.login}'s inbox feed to be live`,
  });
  return sub;
}

async function nextEvent(sub: Subscription<InboxEventsSubscription>) {
  const result = await sub.next();
  expect(result.errors).toBeUndefined();
  return result.data!.inboxEvents;
}

/** The feed's next event is `message`, from `from`, in a conversation with `unread` messages unread. */
async function expectReceived(feed: Subscription<InboxEventsSubscription>, message: Awaited<ReturnType<typeof send>>, from: TestUser, unread: number) {
  const event = await nextEvent(feed);
  expect(event.__typename).toBe('DirectMessageReceived');
  if (event.__typename !== 'DirectMessageReceived') return;
  expect(event.message).toEqual(message);
  expect(event.conversation.partner.login).toBe(from.login);
  expect(event.conversation.unreadCount).toBe(unread);
}

describe('inboxEvents', () => {
  it('delivers each message and read receipt to every connection of the user, across servers', async () => {
    const [a, b] = [await signUp(app1), await signUp(app1)];
    const bOn1 = await inboxFeed(app1, b);
    const bOn2 = await inboxFeed(app2, b);
    const aOn2 = await inboxFeed(app2, a);

    // Each message reaches both of B's connections before the next is sent: the conversation an event carries
    // (read as it is delivered) counts exactly the messages sent so far.
    const first = await send(app1, a, b, 'hello from server 1');
    for (const feed of [bOn1, bOn2]) await expectReceived(feed, first, a, 1);
    const second = await send(app2, a, b, 'hello from server 2');
    for (const feed of [bOn1, bOn2]) await expectReceived(feed, second, a, 2);

    const read = (await gqlOk(app2, MarkConversationReadDocument, { with: a.login }, b.token)).markConversationRead;
    expect(read.readUpTo).toBe(second.id);
    // The receipt for A, and the news for B's own connections (so other devices clear the badge).
    const receipt = await nextEvent(aOn2);
    expect(receipt).toEqual({
      __typename: 'ConversationRead',
      partner: { login: b.login },
      reader: { login: b.login },
      readAt: read.readAt,
      readUpTo: second.id,
    });
    for (const feed of [bOn1, bOn2]) {
      expect(await nextEvent(feed)).toEqual({ ...receipt, partner: { login: a.login } });
    }
    // A sent, B read: nothing else reached anyone. A last message each way, sent after all that (every event
    // above was published before it, through the same Redis), is the next event each feed gets.
    const toA = await send(app1, b, a, 'the last word');
    await expectReceived(aOn2, toA, b, 1);
    const toB = await send(app1, a, b, 'the last word');
    for (const feed of [bOn1, bOn2]) await expectReceived(feed, toB, a, 1);
    expect([aOn2.pending(), bOn1.pending(), bOn2.pending()]).toEqual([0, 0, 0]);
  });

  it('requires a session', async () => {
    const client = wsClient(app1);
    clients.push(client);
    const result = await subscribe(client, InboxEventsDocument).next();
    expect(result.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    expect(result.data ?? null).toBeNull();
  });
});

describe('a third user', () => {
  it('cannot read a conversation by any query or subscription', async () => {
    const [a, b, c] = [await signUp(app1), await signUp(app1), await signUp(app1)];
    const cFeed = await inboxFeed(app2, c);
    const bFeed = await inboxFeed(app1, b);
    const secret = await send(app1, a, b, 'for B only');
    await send(app1, b, a, 'and for A only');
    // The event has gone out: B got it.
    expect((await nextEvent(bFeed)).__typename).toBe('DirectMessageReceived');
    const aCursor = (await gqlOk(app1, ConversationMessagesDocument, { with: b.login, first: 1 }, a.token)).conversation!
      .messages.pageInfo.endCursor!;

    // Whatever C names, C only ever reaches C's own (empty) conversations.
    for (const partner of [a.login, b.login]) {
      const conv = (await gqlOk(app1, ConversationDocument, { with: partner }, c.token)).conversation!;
      expect(conv).toMatchObject({ partner: { login: partner }, lastMessage: null, unreadCount: 0, partnerReadUpTo: null });
      const history = await gqlOk(app1, ConversationMessagesDocument, { with: partner, first: 50 }, c.token);
      expect(history.conversation!.messages.edges).toEqual([]);
      // A cursor of the A–B conversation is refused, not followed.
      const viaCursor = await gql(app1, ConversationMessagesDocument, { with: partner, first: 50, after: aCursor }, c.token);
      expect(codes(viaCursor)).toEqual(['FORBIDDEN']);
      expect(viaCursor.data?.conversation ?? null).toBeNull();
      // Marking "it" read touches nothing of A and B.
      await gqlOk(app1, MarkConversationReadDocument, { with: partner }, c.token);
    }
    // The conversation key is not a login.
    const key = [a.login, b.login].sort().join(':');
    expect(codes(await gql(app1, ConversationDocument, { with: key }, c.token))).toEqual(['NOT_FOUND']);
    expect((await gqlOk(app1, ConversationsDocument, {}, c.token)).conversations.edges).toEqual([]);
    expect((await gqlOk(app1, ConversationDocument, { with: a.login }, b.token)).conversation?.unreadCount).toBe(1);
    expect((await gqlOk(app1, ConversationDocument, { with: b.login }, a.token)).conversation?.unreadCount).toBe(1);

    // C's feed carried nothing of A and B: the first event C gets is the one meant for C.
    const forC = await send(app1, a, c, 'for C');
    const event = await nextEvent(cFeed);
    expect(event.__typename === 'DirectMessageReceived' && event.message.id).toBe(forC.id);
    expect(JSON.stringify(event)).not.toContain(secret.content);
    expect(cFeed.pending()).toBe(0);
  });
});
