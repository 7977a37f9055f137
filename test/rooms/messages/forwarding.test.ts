/**
 * Forwarding a room message to a room or a conversation: the copy's content,
 * and forwardedFrom shown only to those who may read the original.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import {
  DeleteMessageDocument,
  ForwardedEventsDocument,
  ForwardedInConversationDocument,
  ForwardedInRoomDocument,
  ForwardMessageDocument,
} from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { roomFeed } from '../../testkit/feeds.js';
import { messageKey, post, roomWith } from '../../testkit/data/rooms.js';
import { cqlRow } from '../../testkit/cql.js';
import { signUpMany, type TestUser } from '../../testkit/data/users.js';

let a: App;
let b: App;
// alice is in both rooms; bob only in the source room; carol only in the target room; dave in neither.
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser;
let source: string;
let target: string;

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  [alice, bob, carol, dave] = (await signUpMany(a, 4, 'fwd')) as [TestUser, TestUser, TestUser, TestUser];
  source = await roomWith(a, bob, [alice]);
  target = await roomWith(a, carol, [alice]);
});

const forward = (user: TestUser, vars: { messageId: string; toRoom?: string; to?: string }, app = a) => gql(app, ForwardMessageDocument, vars, user.token);

describe('forwardMessage', () => {
  it('posts a copy in another room that points to the original, for those who may read it only', async () => {
    const original = await post(a, bob, source, 'worth sharing');
    const feed = await roomFeed(b, carol.token, ForwardedEventsDocument, { roomName: target });
    const copy = (await forward(alice, { messageId: original.id, toRoom: target })).data!.forwardMessage;
    expect(copy).toMatchObject({ __typename: 'Message', roomName: target, content: 'worth sharing', author: { login: alice.login }, forwardedFrom: { id: original.id } });
    const copyId = (copy as { id: string }).id;
    // carol reads the copy but not the original's room: the copy stands alone.
    expect((await gqlOk(a, ForwardedInRoomDocument, { messageId: copyId }, carol.token)).message).toMatchObject({ content: 'worth sharing', forwardedFrom: null });
    expect((await gqlOk(b, ForwardedInRoomDocument, { messageId: copyId }, alice.token)).message!.forwardedFrom).toMatchObject({ id: original.id, roomName: source });
    // Live on another instance, with what carol may see.
    let event;
    do event = (await feed.data(10_000)).roomEvents;
    while (event.__typename !== 'MessagePosted');
    expect(event).toMatchObject({ message: { content: 'worth sharing', forwardedFrom: null } });
  });

  it('sends a copy to a conversation, the original shown to its sender, not to a recipient outside the room', async () => {
    const original = await post(a, bob, source, 'look at this');
    const dm = (await forward(alice, { messageId: original.id, to: dave.login })).data!.forwardMessage;
    expect(dm).toMatchObject({ __typename: 'DirectMessage', content: 'look at this', forwardedFrom: { id: original.id } });
    const davesView = (await gqlOk(a, ForwardedInConversationDocument, { with: alice.login }, dave.token)).conversation!.messages.edges[0]!.node;
    expect(davesView).toMatchObject({ content: 'look at this', forwardedFrom: null });
    const alicesView = (await gqlOk(a, ForwardedInConversationDocument, { with: dave.login }, alice.token)).conversation!.messages.edges[0]!.node;
    expect(alicesView.forwardedFrom).toMatchObject({ id: original.id });
  });

  it("loses its forwarded_from when deleted: the deletion clears it in the copy's row", async () => {
    const original = await post(a, bob, source, 'pass it on');
    const copy = (await forward(alice, { messageId: original.id, toRoom: target })).data!.forwardMessage as { id: string };
    const key = messageKey(copy.id);
    const stored = async () =>
      (await cqlRow(a, 'SELECT forwarded_from, deleted FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [
        key.roomName,
        key.bucket,
        key.messageId,
      ]))!;
    expect(await stored()).toMatchObject({ forwarded_from: original.id, deleted: null });
    await gqlOk(a, DeleteMessageDocument, { messageId: copy.id }, alice.token);
    expect(await stored()).toMatchObject({ forwarded_from: null, deleted: true });
    // The original is untouched.
    expect((await gqlOk(a, ForwardedInRoomDocument, { messageId: original.id }, bob.token)).message).toMatchObject({ content: 'pass it on' });
  });

  it('is refused from a room the viewer cannot read, for a message without content, and without exactly one target', async () => {
    const original = await post(a, bob, source, 'members only');
    expect(codes(await forward(carol, { messageId: original.id, toRoom: target }))).toEqual(['FORBIDDEN']);
    const both = await forward(alice, { messageId: original.id, toRoom: target, to: dave.login });
    expect(both.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'toRoom' });
    expect((await forward(alice, { messageId: original.id })).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'toRoom' });
    // Into a room the forwarder does not take part in: the target's own rule.
    expect(codes(await forward(bob, { messageId: original.id, toRoom: target }))).toEqual(['FORBIDDEN']);
    await gqlOk(a, DeleteMessageDocument, { messageId: original.id }, bob.token);
    expect((await forward(alice, { messageId: original.id, toRoom: target })).errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'messageId',
    });
  });
});
