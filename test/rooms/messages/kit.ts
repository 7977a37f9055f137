/**
 * What the message-action tests share: an app and four people on it, made before the tests of the file that
 * imports this kit (vitest gives each test file its own instance of the modules it imports), and the reads their
 * checks repeat.
 */
import { beforeAll, expect } from 'vitest';
import type { App } from '../../../src/app.js';
import { MessageWithEditsDocument, MyMessagesDocument, RoomActionEventsDocument, type RoomActionEventsSubscription } from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { gqlOk } from '../../testkit/http.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { roomFeed, type Feed } from '../../testkit/feeds.js';

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

/** The content of a message in its author's own list of messages (me.messages). */
export async function authorsCopy(author: TestUser, id: string) {
  const mine = (await gqlOk(app, MyMessagesDocument, { first: 50 }, author.token)).me!.messages!;
  const edge = mine.edges.find((e) => e.node.id === id);
  expect(edge, 'the message is in its author’s list').toBeDefined();
  return edge!.node.content;
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
