/**
 * Editing a message (each version kept, newest first) and deleting it (a tombstone in place), over HTTP and graphql-ws against the real node.
 */
import { describe, expect, it } from 'vitest';
import cassandra from 'cassandra-driver';
import { AddReactionDocument, DeleteMessageDocument, DeleteRoomDocument, EditMessageDocument, RoomReadStateDocument, HideMessageDocument, HistoryDocument, MessageReactionsDocument, MyMessagesDocument, PostReplyDocument } from '../../generated/graphql.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { messageKey, post, roomWith } from '../../testkit/data/rooms.js';
import { cqlRow } from '../../testkit/cql.js';
import { startApp } from '../../testkit/app.js';
import { failNextStatement } from '../../testkit/faults/statement-faults.js';
import { app, alice, bob, carol, dave, fieldOf, withEdits, authorsCopy, roomEvents, nextOf } from './kit.js';
import type { TestUser } from '../../testkit/data/users.js';

describe('editMessage', () => {
  it('replaces the content, keeps every earlier version newest first, and tells the room', async () => {
    const room = await roomWith(app, alice, [bob]);
    const feed = await roomEvents(alice, room);
    const posted = await post(app, bob, room, 'first draft');
    await nextOf(feed, 'MessagePosted');

    const once = (await gqlOk(app, EditMessageDocument, { messageId: posted.id, content: '  second draft ' }, bob.token)).editMessage;
    expect(once).toMatchObject({ id: posted.id, content: 'second draft', version: 1, deleted: false });
    expect(Date.parse(once.editedAt!)).toBeGreaterThanOrEqual(Date.parse(posted.createdAt));
    const edited = await nextOf(feed, 'MessageEdited');
    expect(edited.message).toMatchObject({ id: posted.id, content: 'second draft', version: 1 });

    await gqlOk(app, EditMessageDocument, { messageId: posted.id, content: 'third draft', expectedVersion: 1 }, bob.token);
    const read = await withEdits(posted.id, alice.token);
    expect(read).toMatchObject({ content: 'third draft', version: 2 });
    expect(read.edits.edges.map((e) => [e.node.version, e.node.content])).toEqual([
      [1, 'second draft'],
      [0, 'first draft'],
    ]);
    expect(read.edits.edges[1]!.node.createdAt).toBe(posted.createdAt);
    expect(read.edits.edges[0]!.node.createdAt).toBe(once.editedAt);

    // Paged one at a time, the same versions in the same order.
    const page1 = await withEdits(posted.id, alice.token, 1);
    expect(page1.edits.edges.map((e) => e.node.version)).toEqual([1]);
    expect(page1.edits.pageInfo.hasNextPage).toBe(true);
    const page2 = await withEdits(posted.id, alice.token, 1, page1.edits.pageInfo.endCursor!);
    expect(page2.edits.edges.map((e) => e.node.version)).toEqual([0]);
    expect(page2.edits.pageInfo.hasNextPage).toBe(false);

    // History and the author's own list show the current version.
    const history = (await gqlOk(app, HistoryDocument, { roomName: room, first: 5 }, alice.token)).room!.messages!;
    expect(history.edges.find((e) => e.node.id === posted.id)?.node.content).toBe('third draft');
    const mine = (await gqlOk(app, MyMessagesDocument, { first: 50 }, bob.token)).me!.messages!;
    expect(mine.edges.find((e) => e.node.id === posted.id)?.node.content).toBe('third draft');
  });

  it("is heard by the room once it applied even when its author's copy fails, and its retry finishes that copy without a new version", async () => {
    const room = await roomWith(app, alice, [bob]);
    const feed = await roomEvents(alice, room);
    const posted = await post(app, bob, room, 'draft');
    await nextOf(feed, 'MessagePosted');

    const fault = failNextStatement(app, /^\s*UPDATE messages_by_author/);
    const failed = await gql(app, EditMessageDocument, { messageId: posted.id, content: 'final', expectedVersion: 0 }, bob.token);
    expect(fault.fired()).toBe(true);
    expect(codes(failed)).toEqual(['SERVICE_UNAVAILABLE']);
    expect(failed.errors?.[0]?.extensions?.retryAfter).toBeGreaterThan(0);
    // The edit stands (its LWT applied): the room has it and has heard of it.
    expect((await nextOf(feed, 'MessageEdited')).message).toMatchObject({ id: posted.id, content: 'final', version: 1 });
    expect(await withEdits(posted.id, alice.token)).toMatchObject({ content: 'final', version: 1 });
    expect(await authorsCopy(bob, posted.id)).toBe('draft');

    // The client does what it was told, with the same arguments: the edit is finished, not made again.
    const retried = (await gqlOk(app, EditMessageDocument, { messageId: posted.id, content: 'final', expectedVersion: 0 }, bob.token)).editMessage;
    expect(retried).toMatchObject({ id: posted.id, content: 'final', version: 1 });
    expect(await authorsCopy(bob, posted.id)).toBe('final');
    const read = await withEdits(posted.id, alice.token);
    expect(read.edits.edges.map((e) => [e.node.version, e.node.content])).toEqual([[0, 'draft']]);
    // No second event: the next one is the next post.
    await post(app, bob, room, 'next');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('next');
  });

  it('is for the author only, never on system, hidden or deleted messages, and checks its input', async () => {
    const room = await roomWith(app, alice, [bob]);
    const byBob = await post(app, bob, room, 'mine');
    expect(codes(await gql(app, EditMessageDocument, { messageId: byBob.id, content: 'hijack' }, alice.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, EditMessageDocument, { messageId: byBob.id, content: 'x' }))).toEqual(['UNAUTHENTICATED']);

    const empty = await gql(app, EditMessageDocument, { messageId: byBob.id, content: '   ' }, bob.token);
    expect([codes(empty), fieldOf(empty)]).toEqual([['BAD_USER_INPUT'], 'content']);
    const badId = await gql(app, EditMessageDocument, { messageId: 'not-an-id', content: 'x' }, bob.token);
    expect([codes(badId), fieldOf(badId)]).toEqual([['BAD_USER_INPUT'], 'messageId']);
    const stale = await gql(app, EditMessageDocument, { messageId: byBob.id, content: 'x', expectedVersion: 3 }, bob.token);
    expect(codes(stale)).toEqual(['CONFLICT']);

    // Bob's join made a system message about him: he did not write it.
    const history = (await gqlOk(app, HistoryDocument, { roomName: room, first: 10 }, bob.token)).room!.messages!;
    const joined = history.edges.find((e) => e.node.systemMessage)!.node;
    const onSystem = await gql(app, EditMessageDocument, { messageId: joined.id, content: 'rewritten' }, bob.token);
    expect([codes(onSystem), onSystem.errors?.[0]?.extensions?.reason, fieldOf(onSystem)]).toEqual([['MESSAGE_NOT_EDITABLE'], 'SYSTEM_MESSAGE', 'messageId']);

    const hidden = await post(app, bob, room, 'to hide');
    await gqlOk(app, EditMessageDocument, { messageId: hidden.id, content: 'to hide, edited' }, bob.token);
    await gqlOk(app, HideMessageDocument, { messageId: hidden.id }, alice.token);
    // Its history goes from view with its content.
    expect((await withEdits(hidden.id, alice.token)).edits.edges).toEqual([]);
    const onHidden = await gql(app, EditMessageDocument, { messageId: hidden.id, content: 'back' }, bob.token);
    expect([codes(onHidden), onHidden.errors?.[0]?.extensions?.reason, fieldOf(onHidden)]).toEqual([['MESSAGE_NOT_EDITABLE'], 'HIDDEN', 'messageId']);

    await gqlOk(app, DeleteMessageDocument, { messageId: byBob.id }, bob.token);
    const onDeleted = await gql(app, EditMessageDocument, { messageId: byBob.id, content: 'back' }, bob.token);
    expect([codes(onDeleted), onDeleted.errors?.[0]?.extensions?.reason, fieldOf(onDeleted)]).toEqual([['MESSAGE_NOT_EDITABLE'], 'DELETED', 'messageId']);
    expect((await withEdits(byBob.id, bob.token)).content).toBeNull();
  });
});

describe('an edit whose LWT times out while another edit wins', () => {
  it('is not answered SERVICE_UNAVAILABLE: read back as lost for good, it runs from the new version and applies', async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, bob, room, 'original');
    // Its first two LWT runs time out unsent; another edit of version 0 applies, on another instance, just before
    // the first.
    const other = await startApp();
    const client = app.services.db.client;
    const { execute } = client;
    let timedOut = 0;
    client.execute = async function (this: unknown, query: string, ...rest: unknown[]) {
      if (timedOut < 2 && /SET content = \?, version = \?/.test(query)) {
        if (timedOut++ === 0) await gqlOk(other, EditMessageDocument, { messageId: m.id, content: 'the winner' }, bob.token);
        throw new cassandra.errors.OperationTimedOutError('injected: the node did not answer in time');
      }
      return (execute as (...a: unknown[]) => Promise<unknown>).call(client, query, ...rest);
    } as typeof client.execute;
    let edited;
    try {
      edited = await gql(app, EditMessageDocument, { messageId: m.id, content: 'the later one' }, bob.token);
    } finally {
      client.execute = execute;
    }
    // The read back of the first run found version 1 made by another edit: it could never apply, and is not run
    // again (which would time out a second time); the edit reads the message again and goes from version 1.
    expect(edited.errors).toBeUndefined();
    expect(edited.data?.editMessage).toMatchObject({ content: 'the later one', version: 2 });
    expect(timedOut).toBe(2);
    const read = await withEdits(m.id, alice.token);
    expect(read.edits.edges.map((e) => [e.node.version, e.node.content])).toEqual([
      [1, 'the winner'],
      [0, 'original'],
    ]);
  });
});

describe('an edit whose mention rows were lost', () => {
  it('is completed by its retry: the rows of whom it mentions, and of whom it no longer does', async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const m = await post(app, alice, room, 'hello all');
    const mentionsOf = async (user: TestUser) => (await gqlOk(app, RoomReadStateDocument, { roomName: room }, user.token)).room!.readState!.mentionCount;

    // The edit applies, then its mention row for carol is not written: the request fails.
    const lostAdd = failNextStatement(app, /INSERT INTO room_mentions/);
    const mentioning = `hello @${carol.login}`;
    expect(codes(await gql(app, EditMessageDocument, { messageId: m.id, content: mentioning }, alice.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(lostAdd.fired()).toBe(true);
    expect(await mentionsOf(carol)).toBe(0);
    // The same edit again finishes it.
    expect((await gqlOk(app, EditMessageDocument, { messageId: m.id, content: mentioning }, alice.token)).editMessage.mentions.map((u) => u.login)).toEqual([carol.login]);
    expect(await mentionsOf(carol)).toBe(1);

    // And the other way: an edit that drops carol's mention, whose row's removal is lost.
    const lostRemoval = failNextStatement(app, /DELETE FROM room_mentions/);
    expect(codes(await gql(app, EditMessageDocument, { messageId: m.id, content: 'hello again' }, alice.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(lostRemoval.fired()).toBe(true);
    expect(await mentionsOf(carol)).toBe(1);
    await gqlOk(app, EditMessageDocument, { messageId: m.id, content: 'hello again' }, alice.token);
    expect(await mentionsOf(carol)).toBe(0);
    expect(await mentionsOf(bob)).toBe(0);
  });
});

describe('deleteMessage', () => {
  it('leaves a tombstone in place: same id, same cursor, no content, no versions, no reactions', async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const before = await post(app, bob, room, 'before');
    const doomed = await post(app, bob, room, 'doomed');
    const after = await post(app, carol, room, 'after');
    const feed = await roomEvents(alice, room);
    await gqlOk(app, EditMessageDocument, { messageId: doomed.id, content: 'doomed, edited' }, bob.token);
    await gqlOk(app, AddReactionDocument, { messageId: doomed.id, emoji: '👍' }, carol.token);
    // The reaction's event comes once its coalescing window has passed: taken before the deletion's.
    await nextOf(feed, 'MessageEdited');
    await nextOf(feed, 'ReactionChanged');
    const pageBefore = (await gqlOk(app, HistoryDocument, { roomName: room, first: 3 }, alice.token)).room!.messages!;

    const tombstone = (await gqlOk(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token)).deleteMessage;
    expect(tombstone).toMatchObject({ id: doomed.id, deleted: true, content: null, mentions: [] });
    expect((await nextOf(feed, 'MessageDeleted')).message).toMatchObject({ id: doomed.id, deleted: true, content: null });

    const pageAfter = (await gqlOk(app, HistoryDocument, { roomName: room, first: 3 }, alice.token)).room!.messages!;
    expect(pageAfter.edges.map((e) => e.node.id)).toEqual(pageBefore.edges.map((e) => e.node.id));
    expect(pageAfter.edges.map((e) => e.node.content)).toEqual(['after', null, 'before']);
    // A cursor taken before the deletion resumes where it did.
    const resumed = (await gqlOk(app, HistoryDocument, { roomName: room, first: 2, after: pageBefore.edges[0]!.cursor }, alice.token)).room!.messages!;
    expect(resumed.edges.map((e) => [e.node.id, e.node.deleted])).toEqual([
      [doomed.id, true],
      [before.id, false],
    ]);
    expect(after.id).toBe(pageAfter.edges[0]!.node.id);
    expect(before.id).toBe(pageAfter.edges[2]!.node.id);
    const read = await withEdits(doomed.id, alice.token);
    expect(read.edits.edges).toEqual([]);
    expect((await gqlOk(app, MessageReactionsDocument, { messageId: doomed.id }, alice.token)).message!.reactions).toEqual([]);
    // The content is gone from storage too: the room's row, its versions and the author's copy.
    const { bucket, messageId } = messageKey(doomed.id);
    const row = await cqlRow(app, 'SELECT content, deleted FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [room, bucket, messageId]);
    expect(row).toMatchObject({ content: null, deleted: true });
    const versions = await cqlRow(app, 'SELECT COUNT(*) AS n FROM message_versions WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [room, bucket, messageId]);
    expect(Number(versions!.n)).toBe(0);
    const mine = (await gqlOk(app, MyMessagesDocument, { first: 50 }, bob.token)).me!.messages!;
    expect(mine.edges.find((e) => e.node.id === doomed.id)?.node.content).toBeNull();

    // Again: the tombstone, and no second event (the next event is the next post).
    expect((await gqlOk(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token)).deleteMessage.deleted).toBe(true);
    await post(app, carol, room, 'next');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('next');
  });

  it("is heard by the room once it applied even when its author's copy fails to go, and its retry drops that copy", async () => {
    const room = await roomWith(app, alice, [bob]);
    const doomed = await post(app, bob, room, 'doomed');
    await gqlOk(app, EditMessageDocument, { messageId: doomed.id, content: 'doomed, edited' }, bob.token);
    const feed = await roomEvents(alice, room);

    const fault = failNextStatement(app, /^\s*UPDATE messages_by_author/);
    const failed = await gql(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token);
    expect(fault.fired()).toBe(true);
    expect(codes(failed)).toEqual(['SERVICE_UNAVAILABLE']);
    expect((await nextOf(feed, 'MessageDeleted')).message).toMatchObject({ id: doomed.id, deleted: true, content: null });
    expect(await withEdits(doomed.id, alice.token)).toMatchObject({ deleted: true, content: null, edits: { edges: [] } });
    expect(await authorsCopy(bob, doomed.id)).toBe('doomed, edited');

    expect((await gqlOk(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token)).deleteMessage).toMatchObject({ deleted: true, content: null });
    expect(await authorsCopy(bob, doomed.id)).toBeNull();
    const { bucket, messageId } = messageKey(doomed.id);
    const versions = await cqlRow(app, 'SELECT COUNT(*) AS n FROM message_versions WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [room, bucket, messageId]);
    expect(Number(versions!.n)).toBe(0);
    await post(app, bob, room, 'next');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('next');
  });

  it("goes with its room: a deleted room leaves no versions, reactions or threads behind", async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, bob, room, 'short-lived');
    await gqlOk(app, EditMessageDocument, { messageId: m.id, content: 'edited' }, bob.token);
    await gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👋' }, alice.token);
    await gqlOk(app, PostReplyDocument, { roomName: room, content: 'reply', replyTo: m.id }, alice.token);
    const { bucket, messageId } = messageKey(m.id);
    const key = [room, bucket, messageId];
    const tables = [['message_versions', 'time_bucket = ? AND message_id'], ['message_reactions', 'time_bucket = ? AND message_id'], ['message_replies', 'parent_bucket = ? AND parent_id']];
    const rows = async () => {
      const counts: Record<string, number> = {};
      for (const [table, parent] of tables) counts[table!] = Number((await cqlRow(app, `SELECT COUNT(*) AS n FROM ${table} WHERE room_name = ? AND ${parent} = ?`, key))!.n);
      return counts;
    };
    // Each table holds the message's row before (the key reaches them), none after.
    expect(await rows()).toEqual({ message_versions: 1, message_reactions: 1, message_replies: 1 });
    await gqlOk(app, DeleteRoomDocument, { roomName: room }, alice.token);
    expect(await rows()).toEqual({ message_versions: 0, message_reactions: 0, message_replies: 0 });
  });

  it("is for the author or the room's creator", async () => {
    const room = await roomWith(app, alice, [bob, carol]);
    const byBob = await post(app, bob, room, 'by bob');
    expect(codes(await gql(app, DeleteMessageDocument, { messageId: byBob.id }, carol.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, DeleteMessageDocument, { messageId: byBob.id }, dave.token))).toEqual(['FORBIDDEN']);
    expect((await gqlOk(app, DeleteMessageDocument, { messageId: byBob.id }, alice.token)).deleteMessage.deleted).toBe(true);
  });
});
