/**
 * Mentions: of participants only, each told once on their own feed.
 */
import { describe, expect, it } from 'vitest';
import { EditMessageDocument, InboxEventsDocument, PostReplyDocument, SendDirectMessageDocument } from '../../generated/graphql.js';
import { gqlOk } from '../../testkit/http.js';
import { roomWith } from '../../testkit/data/rooms.js';
import { inboxFeed } from '../../testkit/feeds.js';
import { app, alice, bob, carol, dave } from './kit.js';

describe('mentions', () => {
  it('mentions participants only, and tells each one on their own feed once', async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const bobFeed = await inboxFeed(app, bob, InboxEventsDocument);
    const carolFeed = await inboxFeed(app, carol, InboxEventsDocument);
    const daveFeed = await inboxFeed(app, dave, InboxEventsDocument);

    const content = `hi @${bob.login} and @${bob.login.toUpperCase()}, not @${dave.login} nor @nobody_here nor mail@${carol.login}`;
    const m = (await gqlOk(app, PostReplyDocument, { roomName: room, content }, alice.token)).postMessage;
    expect(m.mentions.map((u) => u.login)).toEqual([bob.login]);
    const toBob = (await bobFeed.data()).inboxEvents;
    expect(toBob).toMatchObject({ __typename: 'Mentioned', mentionedIn: { id: m.id, roomName: room, author: { login: alice.login } } });

    // The post did not mention carol (mail@carol is an address): her next event is a direct message sent now.
    await gqlOk(app, SendDirectMessageDocument, { to: carol.login, content: 'barrier' }, alice.token);
    expect((await carolFeed.data()).inboxEvents.__typename).toBe('DirectMessageReceived');

    // An edit that adds carol tells carol, and not bob again.
    const edited = (await gqlOk(app, EditMessageDocument, { messageId: m.id, content: `@${bob.login} @${carol.login}.` }, alice.token)).editMessage;
    expect(edited.mentions.map((u) => u.login)).toEqual([bob.login, carol.login]);
    expect((await carolFeed.data()).inboxEvents).toMatchObject({ __typename: 'Mentioned', mentionedIn: { id: m.id } });

    // Barriers: the next event each of bob and dave receives is a direct message sent now.
    await gqlOk(app, SendDirectMessageDocument, { to: bob.login, content: 'barrier' }, alice.token);
    await gqlOk(app, SendDirectMessageDocument, { to: dave.login, content: 'barrier' }, alice.token);
    expect((await bobFeed.data()).inboxEvents.__typename).toBe('DirectMessageReceived');
    expect((await daveFeed.data()).inboxEvents.__typename).toBe('DirectMessageReceived');
  });
});
