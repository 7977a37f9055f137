/**
 * Custom data on messages and rooms: a bounded JSON object, editable by its
 * author (a message's, through its edits, which keep each version's) or the
 * room's creator, delivered in events on another instance.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import {
  CreateRoomWithMetadataDocument,
  DeleteMessageDocument,
  EditKeepingMetadataDocument,
  EditWithMetadataDocument,
  MessageMetadataDocument,
  MetadataEventsDocument,
  PostWithMetadataDocument,
  SetRoomMetadataDocument,
} from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { cqlRow } from '../../testkit/cql.js';
import { roomFeed } from '../../testkit/feeds.js';
import { roomWith, uniqueRoomName } from '../../testkit/data/rooms.js';
import { signUpMany, type TestUser } from '../../testkit/data/users.js';

let a: App;
let b: App;
let author: TestUser;
let other: TestUser;
let room: string;

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  [author, other] = (await signUpMany(a, 2, 'meta')) as [TestUser, TestUser];
  room = await roomWith(a, author, [other]);
});

const postWith = (metadata: unknown, content = 'with data') => gql(a, PostWithMetadataDocument, { roomName: room, content, metadata }, author.token);
const ROOM_METADATA = 'query RoomMetadata($name: String!) { room(roomName: $name) { metadata } }';
const fieldAndCode = (r: { errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> }) => [r.errors?.[0]?.extensions?.code, r.errors?.[0]?.extensions?.field];

describe('metadata on messages', () => {
  it('is posted, delivered live on another instance, edited by its author with each version keeping its own', async () => {
    const feed = await roomFeed(b, other.token, MetadataEventsDocument, { roomName: room });
    const card = { kind: 'card', payload: { title: 'Launch', tags: ['a', 'b'] } };
    const posted = (await postWith(card)).data!.postMessage;
    expect(posted.metadata).toEqual(card);
    expect((await feed.data(10_000)).roomEvents).toEqual({ __typename: 'MessagePosted', message: { metadata: card } });

    const edited = (await gqlOk(a, EditWithMetadataDocument, { messageId: posted.id, content: 'with data', metadata: { kind: 'card', done: true } }, author.token)).editMessage;
    // The content is the same, the data is not: a new version.
    expect(edited).toMatchObject({ version: 1, metadata: { kind: 'card', done: true } });
    expect((await feed.data(10_000)).roomEvents).toEqual({ __typename: 'MessageEdited', message: { version: 1, metadata: { kind: 'card', done: true } } });
    // Left out, it stays; null, it goes.
    expect((await gqlOk(a, EditKeepingMetadataDocument, { messageId: posted.id, content: 'changed text' }, author.token)).editMessage).toEqual({
      version: 2,
      metadata: { kind: 'card', done: true },
    });
    await gqlOk(a, EditWithMetadataDocument, { messageId: posted.id, content: 'changed text', metadata: null }, author.token);
    const read = (await gqlOk(b, MessageMetadataDocument, { messageId: posted.id }, other.token)).message!;
    expect(read.metadata).toBeNull();
    expect(read.edits.edges.map((e) => [e.node.version, e.node.metadata])).toEqual([
      [2, { kind: 'card', done: true }],
      [1, { kind: 'card', done: true }],
      [0, card],
    ]);
    expect(codes(await gql(a, EditWithMetadataDocument, { messageId: posted.id, content: 'x', metadata: {} }, other.token))).toEqual(['FORBIDDEN']);
  });

  it('takes a JSON object within 4 KB and 8 levels, naming the field otherwise', async () => {
    for (const bad of [['a list'], 'a string', 42, { big: 'x'.repeat(4100) }, { a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } }]) {
      expect(fieldAndCode(await postWith(bad)), JSON.stringify(bad).slice(0, 40)).toEqual(['BAD_USER_INPUT', 'metadata']);
    }
    expect((await postWith({ fits: 'x'.repeat(4000) })).errors).toBeUndefined();
    // Large or deep beyond reason (still within the request size): refused, never a crash.
    expect(fieldAndCode(await postWith({ a: Array(150_000).fill(1) }))).toEqual(['BAD_USER_INPUT', 'metadata']);
    let deep: unknown = 1;
    for (let i = 0; i < 3_000; i++) deep = { d: deep };
    expect(fieldAndCode(await postWith(deep))).toEqual(['BAD_USER_INPUT', 'metadata']);
  });

  it('goes with the content when the message is deleted', async () => {
    const posted = (await postWith({ secret: 'gone' })).data!.postMessage;
    await gqlOk(a, DeleteMessageDocument, { messageId: posted.id }, author.token);
    expect((await gqlOk(a, MessageMetadataDocument, { messageId: posted.id }, author.token)).message!.metadata).toBeNull();
  });
});

describe('metadata on rooms', () => {
  it('is set at creation and by the creator only, and RoomMetadataChanged reaches another instance', async () => {
    const name = uniqueRoomName('meta');
    const created = (await gqlOk(a, CreateRoomWithMetadataDocument, { input: { name, metadata: { theme: 'dark' } } }, author.token)).createRoom;
    expect(created).toEqual({ name, metadata: { theme: 'dark' } });
    const feed = await roomFeed(b, author.token, MetadataEventsDocument, { roomName: name });
    const set = (await gqlOk(a, SetRoomMetadataDocument, { roomName: name, metadata: { theme: 'light', pinnedTab: 2 } }, author.token)).setRoomMetadata;
    expect(set.metadata).toEqual({ theme: 'light', pinnedTab: 2 });
    expect((await feed.data(10_000)).roomEvents).toEqual({ __typename: 'RoomMetadataChanged', metadata: { theme: 'light', pinnedTab: 2 }, by: { login: author.login } });
    expect(codes(await gql(a, SetRoomMetadataDocument, { roomName: name, metadata: {} }, other.token))).toEqual(['FORBIDDEN']);
    expect(fieldAndCode(await gql(a, SetRoomMetadataDocument, { roomName: name, metadata: [1, 2] }, author.token))).toEqual(['BAD_USER_INPUT', 'metadata']);
    expect(fieldAndCode(await gql(a, CreateRoomWithMetadataDocument, { input: { name: uniqueRoomName('meta'), metadata: 'no' } }, author.token))).toEqual([
      'BAD_USER_INPUT',
      'input.metadata',
    ]);
    // Left out is not null: refused, nothing cleared (the data set above is still there, as served and as stored).
    expect(fieldAndCode(await gql(a, SetRoomMetadataDocument, { roomName: name }, author.token))).toEqual(['BAD_USER_INPUT', 'metadata']);
    const kept = (await gql(a, ROOM_METADATA, { name }, author.token)) as { data?: { room: { metadata: unknown } | null } };
    expect(kept.data?.room?.metadata).toEqual({ theme: 'light', pinnedTab: 2 });
    expect(JSON.parse((await cqlRow(a, 'SELECT metadata FROM chat_rooms WHERE room_name = ?', [name]))!.metadata as string)).toEqual({ theme: 'light', pinnedTab: 2 });
    expect((await gqlOk(a, SetRoomMetadataDocument, { roomName: name, metadata: null }, author.token)).setRoomMetadata.metadata).toBeNull();
  });
});
