/**
 * Replies and threads: one level deep, within the room, paged oldest first.
 */
import { describe, expect, it } from 'vitest';
import { DeleteMessageDocument, HistoryDocument, PostReplyDocument, ThreadDocument } from '../../generated/graphql.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { post, roomWith } from '../../testkit/data/rooms.js';
import { app, alice, bob, dave, fieldOf, roomEvents, nextOf } from './kit.js';

describe('replies and threads', () => {
  it('posts a reply into the room and into its parent’s thread, paged oldest first', async () => {
    const room = await roomWith(app, alice, [bob]);
    const parent = await post(app, alice, room, 'thread starter');
    const feed = await roomEvents(alice, room);
    const replies = [];
    for (let i = 0; i < 7; i++) {
      replies.push((await gqlOk(app, PostReplyDocument, { roomName: room, content: `reply ${i}`, replyTo: parent.id }, bob.token)).postMessage);
    }
    expect(replies[0]!.replyTo?.id).toBe(parent.id);
    const live = await nextOf(feed, 'MessagePosted');
    expect(live.message).toMatchObject({ content: 'reply 0', replyTo: { id: parent.id } });

    const thread = (await gqlOk(app, ThreadDocument, { messageId: parent.id, first: 3 }, alice.token)).message!;
    expect(thread.replyCount).toBe(7);
    expect(thread.lastReplyAt).toBe(replies.at(-1)!.createdAt);
    const seen = [...thread.replies.edges.map((e) => e.node.content)];
    let cursor = thread.replies.pageInfo.endCursor;
    let more = thread.replies.pageInfo.hasNextPage;
    while (more) {
      const page = (await gqlOk(app, ThreadDocument, { messageId: parent.id, first: 3, after: cursor }, alice.token)).message!.replies;
      seen.push(...page.edges.map((e) => e.node.content));
      cursor = page.pageInfo.endCursor;
      more = page.pageInfo.hasNextPage;
    }
    expect(seen).toEqual(replies.map((r) => r.content));
    // Replies are room messages too, marked as replies.
    const history = (await gqlOk(app, HistoryDocument, { roomName: room, first: 3 }, alice.token)).room!.messages!;
    expect(history.edges[0]!.node.id).toBe(replies.at(-1)!.id);
    // A message without replies costs nothing and says so.
    expect((await gqlOk(app, ThreadDocument, { messageId: replies[0]!.id }, alice.token)).message).toMatchObject({
      replyCount: 0,
      lastReplyAt: null,
      replies: { edges: [] },
    });
  });

  it('is one level deep, within the room, and never under a deleted or system message', async () => {
    const room = await roomWith(app, alice, [bob]);
    const other = await roomWith(app, alice);
    const parent = await post(app, alice, room, 'parent');
    const reply = (await gqlOk(app, PostReplyDocument, { roomName: room, content: 'reply', replyTo: parent.id }, bob.token)).postMessage;
    const elsewhere = await post(app, alice, other, 'elsewhere');
    const deleted = await post(app, alice, room, 'deleted');
    await gqlOk(app, DeleteMessageDocument, { messageId: deleted.id }, alice.token);
    const joined = (await gqlOk(app, HistoryDocument, { roomName: room, first: 20 }, alice.token)).room!.messages!.edges.find((e) => e.node.systemMessage)!.node;
    for (const replyTo of [reply.id, elsewhere.id, deleted.id, joined.id, 'garbage']) {
      const r = await gql(app, PostReplyDocument, { roomName: room, content: 'nope', replyTo }, bob.token);
      expect([codes(r), fieldOf(r)], replyTo).toEqual([['BAD_USER_INPUT'], 'replyTo']);
    }
    expect(codes(await gql(app, ThreadDocument, { messageId: parent.id }, dave.token))).toEqual(['FORBIDDEN']);
  });
});
