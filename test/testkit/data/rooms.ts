/** Chat room helpers for tests: unique names, a room with members, raw reads of the tables. */
import { randomBytes } from 'node:crypto';
import type { Client } from 'graphql-ws';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { App } from '../../../src/app.js';
import { roomChannel } from '../../../src/resolvers/rooms/live/feed.js';
import { decodeMessageId, type MessageKey } from '../../../src/resolvers/rooms/ids.js';
import { CreateRoomDocument, JoinRoomDocument, PostMessageDocument } from '../../generated/graphql.js';
import { gqlOk } from '../http.js';
import { cqlRow } from '../cql.js';
import { eventually } from '../poll.js';
import { subscribe, type Subscription } from '../ws.js';
import type { TestUser } from './users.js';

let counter = 0;

/** A room name no other test (or earlier run) has used. */
export function uniqueRoomName(prefix = 'room'): string {
  counter += 1;
  return `${prefix}-${randomBytes(4).toString('hex')}${counter}`.slice(0, 31);
}

/** Creates a room as `creator` and joins each of `members` to it. */
export async function roomWith(app: App, creator: TestUser, members: TestUser[] = [], name = uniqueRoomName()) {
  await gqlOk(app, CreateRoomDocument, { input: { name } }, creator.token);
  for (const m of members) await gqlOk(app, JoinRoomDocument, { roomName: name }, m.token);
  return name;
}

export async function post(app: App, user: TestUser, roomName: string, content: string) {
  return (await gqlOk(app, PostMessageDocument, { roomName, content }, user.token)).postMessage;
}

/** Subscribes over `client` to a room's events with `document`, and waits until the subscription is live on `app`. */
export async function followRoom<T>(
  app: App,
  client: Client,
  roomName: string,
  document: TypedDocumentNode<T, { roomName: string }>,
): Promise<Subscription<T>> {
  const before = app.services.pubsub.listeners(roomChannel(roomName));
  const sub = subscribe(client, document, { roomName });
  await eventually(() => app.services.pubsub.listeners(roomChannel(roomName)) > before || sub.pending() > 0, {
    what: `a live subscription to ${roomName}`,
  });
  return sub;
}

/** The stored chat_rooms row, exactly as Cassandra holds it (null columns included). */
export async function rawRoomRow(app: App, name: string) {
  const row = await cqlRow(app, 'SELECT room_name, creation_date, banner, creator, creator_login, participants FROM chat_rooms WHERE room_name = ?', [name]);
  return row ?? null;
}

/** users.chat_rooms as stored (not filtered by the API). */
export async function rawChatRooms(app: App, login: string): Promise<Set<string>> {
  return ((await cqlRow(app, 'SELECT chat_rooms FROM users WHERE login = ?', [login]))?.chat_rooms as Set<string> | null) ?? new Set();
}

/** Where a message id points in storage (room, day bucket, timeuuid), by the server's own decoder. */
export function messageKey(id: string): MessageKey {
  return decodeMessageId('messageId', id);
}
