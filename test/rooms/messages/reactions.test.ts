/**
 * Reactions to a message: each person once per emoji, at most 20 kinds, one ReactionChanged per burst.
 */
import { describe, expect, it } from 'vitest';
import { AddReactionDocument, MessageReactionsDocument, RemoveReactionDocument, RoomActionEventsDocument } from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { post, roomWith } from '../../testkit/data/rooms.js';
import { roomFeed } from '../../testkit/feeds.js';
import { app, alice, bob, carol, dave, fieldOf, nextOf } from './kit.js';

describe('reactions', () => {
  it('counts each person once per emoji, knows the viewer, and lists the first people', async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const m = await post(app, alice, room, 'react to me');
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👍' }, carol.token);
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👍' }, bob.token);
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👍' }, bob.token); // twice: one reaction
    const added = (await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '🇫🇷' }, bob.token)).addReaction;
    // In code point order: 🇫🇷 (U+1F1EB U+1F1F7) before 👍 (U+1F44D).
    expect(added.reactions.map((r) => [r.emoji, r.count, r.reactedByViewer])).toEqual([
      ['🇫🇷', 1, true],
      ['👍', 2, true],
    ]);
    const asAlice = (await gqlOk(app, MessageReactionsDocument, { messageId: m.id }, alice.token)).message!.reactions;
    expect(asAlice.map((r) => [r.emoji, r.count, r.reactedByViewer])).toEqual([
      ['🇫🇷', 1, false],
      ['👍', 2, false],
    ]);
    expect(asAlice[1]!.firstReactors.map((u) => u.login)).toEqual([bob.login, carol.login].sort());

    const removed = (await gqlOk(app, RemoveReactionDocument, { messageId: m.id, emoji: '🇫🇷' }, bob.token)).removeReaction;
    expect(removed.reactions.map((r) => [r.emoji, r.count])).toEqual([['👍', 2]]);
    // Removing what is not there changes nothing.
    await gqlOk(app, RemoveReactionDocument, { messageId: m.id, emoji: '🎉' }, alice.token);
    expect((await gqlOk(app, MessageReactionsDocument, { messageId: m.id }, alice.token)).message!.reactions.map((r) => r.count)).toEqual([2]);
  });

  it('takes exactly one emoji, from participants, and at most 20 kinds per message', async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, alice, room, 'limits');
    for (const emoji of ['a', '👍👍', '', ':)', '👍a', '1', 'x'.repeat(100)]) {
      const r = await gql(app, AddReactionDocument, { messageId: m.id, emoji }, bob.token);
      expect([codes(r), fieldOf(r)], JSON.stringify(emoji)).toEqual([['BAD_USER_INPUT'], 'emoji']);
    }
    for (const emoji of ['👍🏽', '👨‍👩‍👧', '❤️', ' 👍 ']) {
      expect((await gql(app, AddReactionDocument, { messageId: m.id, emoji }, bob.token)).errors, emoji).toBeUndefined();
    }
    expect(codes(await gql(app, AddReactionDocument, { messageId: m.id, emoji: '🎉' }, dave.token))).toEqual(['FORBIDDEN']);

    // Four kinds so far: sixteen more make twenty.
    const more = ['😀', '😁', '😂', '🤣', '😃', '😄', '😅', '😆', '😉', '😊', '😋', '😎', '😍', '😘', '🥰', '😗'];
    for (const emoji of more) await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji }, alice.token);
    const full = await gql(app, AddReactionDocument, { messageId: m.id, emoji: '🚀' }, alice.token);
    expect([codes(full), full.errors?.[0]?.extensions?.limit, full.errors?.[0]?.extensions?.max]).toEqual([['LIMIT_REACHED'], 'REACTION_KINDS_PER_MESSAGE', 20]);
    // A kind the message already has is still welcome.
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '😀' }, bob.token);
    expect((await gqlOk(app, MessageReactionsDocument, { messageId: m.id }, bob.token)).message!.reactions).toHaveLength(20);
  });

  it('publishes one ReactionChanged for a burst on one message, with the counts after it', async () => {
    // A window far longer than the burst takes: every change falls in the first one.
    const coalescing = await startApp({ env: { REACTION_EVENT_WINDOW_MS: '2000' } });
    const room = await roomWith(coalescing, alice, [bob, carol]);
    const m = await post(coalescing, alice, room, 'burst');
    const feed = await roomFeed(coalescing, alice.token, RoomActionEventsDocument, { roomName: room });
    await Promise.all(
      [bob, carol, alice].flatMap((u) => ['🔥', '✅'].map((emoji) => gqlOk(coalescing, AddReactionDocument, { messageId: m.id, emoji }, u.token))),
    );
    // One event for the six changes, with the counts after all of them and when it counted them; the next event
    // is the next post's.
    const event = await nextOf(feed, 'ReactionChanged');
    expect(event.reactions).toEqual([
      { emoji: '✅', count: 3 },
      { emoji: '🔥', count: 3 },
    ]);
    expect(Date.parse(event.countedAt)).toBeGreaterThanOrEqual(Date.parse(m.createdAt));
    await post(coalescing, bob, room, 'after the burst');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('after the burst');
  });
});
