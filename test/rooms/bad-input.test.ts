/**
 * Names and ids that cannot be valid never reach Cassandra: an empty or huge
 * partition key fails there (keys over 64 KiB are refused by the node), and
 * would surface as INTERNAL_SERVER_ERROR. Every rooms entry point answers
 * them itself: null for a lookup, BAD_USER_INPUT naming the argument otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { TimeUuid } from '../../src/db/cassandra/client.js';
import { stringParamsSentDuring } from '../testkit/faults/cql-spy.js';
import {
  DeleteRoomDocument,
  HideMessageDocument,
  JoinRoomDocument,
  LeaveRoomDocument,
  MessageDocument,
  PostMessageDocument,
  RoomDocument,
  RoomEventsDocument,
  RoomsDocument,
  SendTypingDocument,
} from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql } from '../testkit/http.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { roomWith } from '../testkit/data/rooms.js';
import { subscribe, wsClient, type WsClient } from '../testkit/ws.js';

let app: App;
let alice: TestUser;
let client: WsClient;

beforeAll(async () => {
  app = await startApp();
  alice = await signUp(app, { firstname: 'Alice', lastname: 'Liddell' });
  client = wsClient(app, alice.token);
});

afterAll(async () => {
  await client.dispose();
});

const HUGE = 'a'.repeat(70 * 1024);
const BAD_NAMES = ['', '   ', 'ab', HUGE, `${HUGE}.room`, 'x'.repeat(32)];

/** A message id in the server's format, around a room name of our choosing. */
function forgedMessageId(roomName: string): string {
  const at = new Date('2025-01-01T10:00:00Z');
  return Buffer.from(`m1|${roomName}|20250101|${TimeUuid.fromDate(at).toString()}`).toString('base64url');
}

describe('room names and message ids that cannot be valid', () => {
  it('answer null or BAD_USER_INPUT at every entry point, never an error from Cassandra', async () => {
    const name = await roomWith(app, alice);
    const sent = await stringParamsSentDuring(app, async () => {
      for (const bad of BAD_NAMES) {
        const what = `${bad.slice(0, 10)}… (${bad.length} chars)`;
        const lookup = await gql(app, RoomDocument, { roomName: bad }, alice.token);
        expect(lookup.errors, what).toBeUndefined();
        expect(lookup.data?.room, what).toBeNull();

        const calls = [
          ['roomName', gql(app, JoinRoomDocument, { roomName: bad }, alice.token)],
          ['roomName', gql(app, LeaveRoomDocument, { roomName: bad }, alice.token)],
          ['roomName', gql(app, DeleteRoomDocument, { roomName: bad }, alice.token)],
          ['roomName', gql(app, PostMessageDocument, { roomName: bad, content: 'hi' }, alice.token)],
          ['roomName', gql(app, SendTypingDocument, { roomName: bad }, alice.token)],
          ['messageId', gql(app, MessageDocument, { messageId: forgedMessageId(bad) }, alice.token)],
          ['messageId', gql(app, HideMessageDocument, { messageId: forgedMessageId(bad) }, alice.token)],
        ] as const;
        for (const [field, call] of calls) {
          const res = await call;
          expect(codes(res), `${field}: ${what}`).toEqual(['BAD_USER_INPUT']);
          expect(res.errors?.[0]?.extensions?.field).toBe(field);
        }
        const live = await subscribe(client, RoomEventsDocument, { roomName: bad }).next();
        expect(live.errors?.[0]?.extensions?.code, `roomEvents: ${what}`).toBe('BAD_USER_INPUT');
      }
      // A room name in an id is held to the stored form (lowercase) too.
      const upper = await gql(app, MessageDocument, { messageId: forgedMessageId(name.toUpperCase()) }, alice.token);
      expect(codes(upper)).toEqual(['BAD_USER_INPUT']);
      // A rooms cursor is a room name: the same rules.
      const cursor = Buffer.from(JSON.stringify({ v: 1, r: HUGE })).toString('base64url');
      const page = await gql(app, RoomsDocument, { first: 2, after: cursor }, alice.token);
      expect(codes(page)).toEqual(['BAD_USER_INPUT']);
      expect(page.errors?.[0]?.extensions?.field).toBe('after');
    });
    // Nothing of those inputs was sent to the node (the session check and the room itself may be).
    expect(sent.filter((p) => p.length > 64 || p.trim() === '')).toEqual([]);
  });
});
