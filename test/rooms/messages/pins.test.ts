/**
 * The creator's pins: pin order, the room told, unpinned on deletion, and the limits of pins and edits.
 */
import { describe, expect, it } from 'vitest';
import { DeleteMessageDocument, EditMessageDocument, PinMessageDocument, PinnedMessagesDocument, RoomDocument, UnpinMessageDocument } from '../../generated/graphql.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { messageKey, post, roomWith } from '../../testkit/data/rooms.js';
import { cqlRow } from '../../testkit/cql.js';
import { Limits } from '../../../src/limits.js';
import { newTimeUuid } from '../../../src/timeuuids.js';
import { app, alice, bob, dave, roomEvents, nextOf } from './kit.js';

describe('pins', () => {
  it("lists the creator's pins in pin order and tells the room", async () => {
    const room = await roomWith(app, alice, [bob]);
    const [m1, m2, m3] = [await post(app, bob, room, 'one'), await post(app, bob, room, 'two'), await post(app, bob, room, 'three')];
    const feed = await roomEvents(bob, room);
    for (const m of [m2, m3, m1, m2]) await gqlOk(app, PinMessageDocument, { messageId: m.id }, alice.token);
    const pinned = async () => (await gqlOk(app, PinnedMessagesDocument, { roomName: room }, bob.token)).room!.pinnedMessages.map((m) => m.content);
    expect(await pinned()).toEqual(['two', 'three', 'one']);
    for (const m of [m2, m3, m1]) expect((await nextOf(feed, 'MessagePinned')).message.id).toBe(m.id);

    await gqlOk(app, UnpinMessageDocument, { messageId: m3.id }, alice.token);
    await gqlOk(app, UnpinMessageDocument, { messageId: m3.id }, alice.token); // not pinned any more: no change, no event
    expect(await pinned()).toEqual(['two', 'one']);
    expect((await nextOf(feed, 'MessageUnpinned')).message.id).toBe(m3.id);
    // The second unpin published nothing: the room's next event is the next post's (one instance keeps its order).
    await post(app, bob, room, 'barrier');
    expect((await nextOf(feed, 'MessagePosted')).message.content).toBe('barrier');
    expect(codes(await gql(app, PinMessageDocument, { messageId: m3.id }, bob.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, PinnedMessagesDocument, { roomName: room }, dave.token))).toEqual(['FORBIDDEN']);
    expect((await gqlOk(app, RoomDocument, { roomName: room }, bob.token)).room?.name).toBe(room);
  });
});

describe('pins and deletion, and the limits of pins and edits', () => {
  it('unpins a message as it is deleted, after its MessageDeleted, freeing its place', async () => {
    const room = await roomWith(app, alice, [bob]);
    const [kept, doomed] = [await post(app, bob, room, 'kept'), await post(app, bob, room, 'doomed')];
    for (const m of [kept, doomed]) await gqlOk(app, PinMessageDocument, { messageId: m.id }, alice.token);
    const feed = await roomEvents(alice, room);
    await gqlOk(app, DeleteMessageDocument, { messageId: doomed.id }, bob.token);
    expect((await feed.data()).roomEvents).toMatchObject({ __typename: 'MessageDeleted', message: { id: doomed.id } });
    expect((await feed.data()).roomEvents).toMatchObject({ __typename: 'MessageUnpinned', message: { id: doomed.id } });
    expect((await gqlOk(app, PinnedMessagesDocument, { roomName: room }, bob.token)).room!.pinnedMessages.map((m) => m.id)).toEqual([kept.id]);
    const stored = await cqlRow(app, 'SELECT pinned_messages FROM chat_rooms WHERE room_name = ?', [room]);
    expect((stored!.pinned_messages as unknown[]).map(String)).toEqual([messageKey(kept.id).messageId]);
  });

  it(`refuses the ${Limits.room.maxPins + 1}th pin and the ${Limits.room.edits.maxVersion + 1}th edit with LIMIT_REACHED, naming the limit`, async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, alice, room, 'pin me');
    // The room holds its limit of pins already (written to storage: 50 posts and pins would only slow the test).
    const others = Array.from({ length: Limits.room.maxPins }, () => newTimeUuid(new Date()));
    await cqlRow(app, 'UPDATE chat_rooms SET pinned_messages = ? WHERE room_name = ?', [others, room]);
    const pin = await gql(app, PinMessageDocument, { messageId: m.id }, alice.token);
    expect([codes(pin), pin.errors?.[0]?.extensions?.limit, pin.errors?.[0]?.extensions?.max]).toEqual([['LIMIT_REACHED'], 'PINS_PER_ROOM', Limits.room.maxPins]);

    // A message at its last version takes no more edits.
    const k = messageKey(m.id);
    await cqlRow(app, 'UPDATE chat_room_messages SET version = ? WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [
      Limits.room.edits.maxVersion,
      k.roomName,
      k.bucket,
      k.messageId,
    ]);
    const edit = await gql(app, EditMessageDocument, { messageId: m.id, content: 'once more' }, alice.token);
    expect([codes(edit), edit.errors?.[0]?.extensions?.limit, edit.errors?.[0]?.extensions?.max]).toEqual([['LIMIT_REACHED'], 'EDITS_PER_MESSAGE', Limits.room.edits.maxVersion]);
  });
});
