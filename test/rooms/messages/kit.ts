/**
 * What the message-action tests share: an app and four people on it, made before the tests of the file that
 * imports this kit (vitest gives each test file its own instance of the modules it imports), and the reads their
 * checks repeat.
 */
import { beforeAll, expect } from 'vitest';
import type { App } from '../../../src/app.js';
import { MessageWithEditsDocument, RoomActionEventsDocument, type RoomActionEventsSubscription } from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { gqlOk } from '../../testkit/http.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { roomFeed, type Feed } from '../../testkit/feeds.js';
import { messageKey } from '../../testkit/data/rooms.js';
import { cqlRow } from '../../testkit/cql.js';
import { monthOfDay } from '../../../src/buckets.js';

export let app: App;
export let alice: TestUser; // creates the rooms
export let bob: TestUser;
export let carol: TestUser;
export let dave: TestUser; // takes part in no room

beforeAll(async () => {
  app = await startApp();
  [alice, bob, carol, dave] = await Promise.all([
    signUp(app, { firstname: 'Alice' }),
    signUp(app, { firstname: 'Bob' }),
    signUp(app, { firstname: 'Carol' }),
    signUp(app, { firstname: 'Dave' }),
  ]);
});

export const fieldOf = (r: { errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> }) => r.errors?.[0]?.extensions?.field;

export async function withEdits(id: string, token: string, first?: number, after?: string) {
  return (await gqlOk(app, MessageWithEditsDocument, { messageId: id, first, after }, token)).message!;
}

/**
 * The content of the author's copy of a message, as stored (messages_by_author): me.messages serves the room
 * message itself, so only storage shows whether an edit or a deletion reached the copy.
 */
export async function authorsCopy(author: TestUser, id: string) {
  const { bucket, messageId } = messageKey(id);
  const copy = await cqlRow(app, 'SELECT content FROM messages_by_author WHERE author_login = ? AND time_bucket = ? AND message_id = ?', [
    author.login,
    monthOfDay(bucket),
    messageId,
  ]);
  expect(copy, 'the message has its author’s copy').toBeDefined();
  return (copy!.content as string | null) ?? null;
}

export function roomEvents(user: TestUser, roomName: string) {
  return roomFeed(app, user.token, RoomActionEventsDocument, { roomName });
}

type RoomEvent = RoomActionEventsSubscription['roomEvents'];
export async function nextOf<K extends RoomEvent['__typename']>(feed: Feed<RoomActionEventsSubscription>, kind: K) {
  const event = (await feed.data()).roomEvents;
  expect(event.__typename).toBe(kind);
  return event as Extract<RoomEvent, { __typename: K }>;
}
