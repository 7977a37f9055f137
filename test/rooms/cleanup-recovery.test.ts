/**
 * A room's deletion is one LWT; its cleanup (people's room lists, every
 * message, the authors' copies, its polls' votes and its files, read state)
 * is many writes after it. A server
 * killed with SIGKILL in the middle of that cleanup (a real process,
 * src/main.ts) leaves it listed in pending_room_cleanups, and another
 * instance's job finishes it, without touching a new room of the same name.
 * A request lost right after the LWT, before it listed the cleanup, left its
 * intent listed: the job finds out whether that LWT applied, and cleans up
 * after it only if it did.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import cassandra from 'cassandra-driver';
import type { App } from '../../src/app.js';
import {
  AddReactionDocument,
  DeleteRoomDocument,
  EditMessageDocument,
  ForwardMessageDocument,
  HistoryDocument,
  MessageReactionsDocument,
  MessageWithEditsDocument,
  PostPollDocument,
  PostReplyDocument,
  ThreadDocument,
  VotePollDocument,
} from '../generated/graphql.js';
import { dayBucket, monthOfDay } from '../../src/buckets.js';
import { startApp, stopApp } from '../testkit/app.js';
import { startAppProcess } from '../testkit/app-process.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { messageKey, post, rawChatRooms, rawRoomRow, roomWith, uniqueRoomName } from '../testkit/data/rooms.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { seedHistory } from '../testkit/data/seed-history.js';
import { cqlRows } from '../testkit/cql.js';
import { eventually } from '../testkit/poll.js';
import { failNextStatement, onNextStatement } from '../testkit/faults/statement-faults.js';

let survivor: App;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  survivor = await startApp();
  [alice, bob] = await Promise.all([signUp(survivor, { firstname: 'Alice' }), signUp(survivor, { firstname: 'Bob' })]);
});

/** Bob's copies (messages_by_author) that name `room`, in the month buckets `months`. */
async function bobsCopiesIn(room: string, months: Set<number>): Promise<string[]> {
  const ids: string[] = [];
  for (const month of months) {
    const rows = await cqlRows(survivor, 'SELECT message_id, room_name FROM messages_by_author WHERE author_login = ? AND time_bucket = ?', [bob.login, month]);
    for (const row of rows) if (row.room_name === room) ids.push(row.message_id.toString());
  }
  return ids;
}

/**
 * The room's entries in pending_room_cleanups (listed under the day of the deletion: yesterday to tomorrow here),
 * each an intent (listed before the LWT) or not (listed once it applied).
 */
async function pendingCleanupsOf(room: string): Promise<Array<{ intent: boolean }>> {
  const rows = [];
  for (const offset of [-1, 0, 1]) {
    const day = dayBucket(new Date(Date.now() + offset * 86_400_000));
    rows.push(...(await cqlRows(survivor, 'SELECT room_created_at FROM pending_room_cleanups WHERE day = ? AND room_name = ?', [day, room])));
  }
  return rows.map((row) => ({ intent: row.room_created_at != null }));
}

const confirmed = (entries: Array<{ intent: boolean }>) => entries.filter((e) => !e.intent);

/**
 * A message of the room made again, edited, reacted to and replied to (each in a partition of its own, which a
 * cleanup deletes above the deletion's time), and a check that all of it is still there.
 */
async function actedOn(room: string): Promise<{ id: string; intact: () => Promise<void> }> {
  const { id } = await post(survivor, bob, room, 'second life');
  await gqlOk(survivor, EditMessageDocument, { messageId: id, content: 'second life, edited' }, bob.token);
  await gqlOk(survivor, AddReactionDocument, { messageId: id, emoji: '👍' }, alice.token);
  await gqlOk(survivor, PostReplyDocument, { roomName: room, content: 'a reply', replyTo: id }, alice.token);
  return {
    id,
    intact: async () => {
      const edited = (await gqlOk(survivor, MessageWithEditsDocument, { messageId: id, first: 10 }, alice.token)).message!;
      expect(edited.content).toBe('second life, edited');
      expect(edited.edits.edges.map((e) => e.node.content)).toContain('second life');
      const reactions = (await gqlOk(survivor, MessageReactionsDocument, { messageId: id }, alice.token)).message!.reactions;
      expect(reactions.map((r) => [r.emoji, r.count])).toEqual([['👍', 1]]);
      const thread = (await gqlOk(survivor, ThreadDocument, { messageId: id, first: 10 }, alice.token)).message!;
      expect(thread.replies.edges.map((e) => e.node.content)).toEqual(['a reply']);
    },
  };
}

/** How many rows a message has in the tables of its parts (earlier versions, reactions). */
async function partsOf(room: string, key: { bucket: number; messageId: string }) {
  const counts: Record<string, number> = {};
  for (const table of ['message_versions', 'message_reactions']) {
    const rows = await cqlRows(survivor, `SELECT message_id FROM ${table} WHERE room_name = ? AND time_bucket = ? AND message_id = ?`, [
      room,
      key.bucket,
      cassandra.types.TimeUuid.fromString(key.messageId),
    ]);
    counts[table] = rows.length;
  }
  return counts;
}

/**
 * Deletes `room` on a server process and kills it once the deletion applied and
 * listed its cleanup, while that cleanup is still running (some of Bob's copies
 * are still there). False when the cleanup finished before the kill landed.
 */
async function killMidCleanup(room: string, months: Set<number>): Promise<boolean> {
  const doomed = await startAppProcess();
  const deleting = gql(doomed.app, DeleteRoomDocument, { roomName: room }, alice.token).catch(() => undefined);
  await eventually(async () => confirmed(await pendingCleanupsOf(room)).length > 0, { intervalMs: 2, what: 'the deletion to list its cleanup' });
  expect(await rawRoomRow(survivor, room)).toBeNull();
  await doomed.kill();
  await deleting;
  return (await bobsCopiesIn(room, months)).length > 0;
}

describe('a room deletion that runs to its end', () => {
  it('lists its cleanup while it runs and unlists it when done', async () => {
    const name = await roomWith(survivor, alice, [bob]);
    await post(survivor, bob, name, 'soon gone');
    const listed: unknown[] = [];
    // Looks at the list when the cleanup starts its work on the messages.
    onNextStatement(survivor, /SELECT time_bucket FROM messages_bucket WHERE room_name/, async () => {
      listed.push(...(await pendingCleanupsOf(name)));
    });
    expect((await gqlOk(survivor, DeleteRoomDocument, { roomName: name }, alice.token)).deleteRoom).toBe(true);
    // Its intent, listed before the LWT, gave way to the cleanup listed at the deletion's time.
    expect(listed).toEqual([{ intent: false }]);
    expect(await pendingCleanupsOf(name)).toEqual([]);
  });
});

describe('SIGKILL in the middle of a room deletion', () => {
  it("leaves the cleanup listed; another instance finishes it and spares the new room of that name", async () => {
    // A cleanup long enough to be cut short: 5,000 messages (of 1,000 rows a page, 100 deletes a batch).
    let name = '';
    let months = new Set<number>();
    let seededBuckets = new Set<number>();
    let cutShort = false;
    for (let attempt = 0; attempt < 3 && !cutShort; attempt++) {
      name = await roomWith(survivor, alice, [bob], uniqueRoomName('doomed'));
      const room = (await survivor.services.stores.rooms.byName(name))!;
      const start = room.createdAt.getTime();
      // Between the room's creation and now: a room made again later must not find them newer than itself.
      const span = Math.max(1, Date.now() - start - 1);
      const times = Array.from({ length: 5000 }, (_, i) => new Date(start + 1 + Math.floor((i * span) / 5000)));
      const seeded = await seedHistory(survivor, room, { login: bob.login, firstname: bob.firstname, lastname: bob.lastname }, times);
      months = new Set(seeded.map((m) => monthOfDay(m.bucket)));
      seededBuckets = new Set(seeded.map((m) => m.bucket));
      cutShort = await killMidCleanup(name, months);
    }
    expect(cutShort, 'a kill landed in the middle of a cleanup (3 tries)').toBe(true);
    expect(confirmed(await pendingCleanupsOf(name))).toHaveLength(1);

    // The name is taken again before any instance gets to the cleanup.
    await roomWith(survivor, alice, [bob], name);
    const reborn = await actedOn(name);

    // An instance whose job takes on cleanups at once (no grace) finishes it at its start.
    await startApp({ env: { ROOM_CLEANUP_GRACE_MS: '0' } });
    await eventually(async () => (await pendingCleanupsOf(name)).length === 0, { timeoutMs: 60_000, what: 'the cleanup to finish' });
    await reborn.intact();

    // Of the room's messages and Bob's copies, only the new room's are left; both lists still hold the new room.
    const { bucket, messageId } = messageKey(reborn.id);
    expect(await bobsCopiesIn(name, new Set([...months, monthOfDay(bucket)]))).toEqual([messageId]);
    const buckets = new Set([...seededBuckets, bucket]);
    const left = [];
    for (const b of buckets) {
      left.push(...(await cqlRows(survivor, 'SELECT content FROM chat_room_messages WHERE room_name = ? AND time_bucket = ?', [name, b])));
    }
    expect(left.map((r) => r.content as string).filter((c) => c?.startsWith('seed '))).toEqual([]);
    expect(left.map((r) => r.content)).toContain('second life, edited');
    const history = (await gqlOk(survivor, HistoryDocument, { roomName: name, first: 10 }, alice.token)).room!.messages!;
    expect(history.edges.map((e) => e.node.content)).toContain('second life, edited');
    expect(await rawChatRooms(survivor, bob.login)).toContain(name);
    expect(await rawChatRooms(survivor, alice.login)).toContain(name);
  }, 180_000);
});

describe('a room deletion whose request is lost around its LWT', () => {
  it('is found from its intent when the listing after the LWT fails; the job cleans up and spares the room made again', async () => {
    const name = await roomWith(survivor, alice, [bob]);
    const old = await post(survivor, bob, name, 'before the deletion');
    // Parts of the old message the cleanup must drop too: an earlier version and a reaction.
    await gqlOk(survivor, EditMessageDocument, { messageId: old.id, content: 'before the deletion' + ', edited' }, bob.token);
    await gqlOk(survivor, AddReactionDocument, { messageId: old.id, emoji: '👀' }, alice.token);
    // The first listing is the intent; the second, once the LWT applied, fails: as if the server were lost there.
    onNextStatement(survivor, /INSERT INTO pending_room_cleanups/, async () => {
      failNextStatement(survivor, /INSERT INTO pending_room_cleanups/);
    });
    expect(codes(await gql(survivor, DeleteRoomDocument, { roomName: name }, alice.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(await rawRoomRow(survivor, name)).toBeNull();
    expect(await pendingCleanupsOf(name)).toEqual([{ intent: true }]);
    const oldKey = messageKey(old.id);
    const oldMonth = monthOfDay(oldKey.bucket);
    expect(await bobsCopiesIn(name, new Set([oldMonth]))).toEqual([oldKey.messageId]);
    expect(await partsOf(name, oldKey)).toEqual({ message_versions: 1, message_reactions: 1 });

    // The name is taken again before any instance gets to the intent.
    await roomWith(survivor, alice, [bob], name);
    const reborn = await actedOn(name);

    const eager = await startApp({ env: { ROOM_CLEANUP_GRACE_MS: '0' } });
    await eventually(async () => (await pendingCleanupsOf(name)).length === 0, { timeoutMs: 30_000, what: 'the intent to be settled' });
    await stopApp(eager);
    await reborn.intact();

    const newKey = messageKey(reborn.id);
    expect(await bobsCopiesIn(name, new Set([oldMonth, monthOfDay(newKey.bucket)]))).toEqual([newKey.messageId]);
    const stored = [];
    for (const b of new Set([oldKey.bucket, newKey.bucket])) {
      stored.push(...(await cqlRows(survivor, 'SELECT content FROM chat_room_messages WHERE room_name = ? AND time_bucket = ?', [name, b])));
    }
    expect(stored.map((r) => r.content)).not.toContain('before the deletion, edited');
    expect(await partsOf(name, oldKey)).toEqual({ message_versions: 0, message_reactions: 0 });
    expect(stored.map((r) => r.content)).toContain('second life, edited');
    expect(await rawChatRooms(survivor, bob.login)).toContain(name);
    expect(await rawChatRooms(survivor, alice.login)).toContain(name);
  }, 60_000);

  it('drops an intent whose LWT never applied, and leaves the room as it was', async () => {
    const name = await roomWith(survivor, alice, [bob]);
    const kept = await post(survivor, bob, name, 'still here');
    failNextStatement(survivor, /DELETE FROM chat_rooms WHERE room_name = \? IF/);
    expect(codes(await gql(survivor, DeleteRoomDocument, { roomName: name }, alice.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(await pendingCleanupsOf(name)).toEqual([{ intent: true }]);

    const eager = await startApp({ env: { ROOM_CLEANUP_GRACE_MS: '0' } });
    await eventually(async () => (await pendingCleanupsOf(name)).length === 0, { timeoutMs: 30_000, what: 'the intent to be settled' });
    await stopApp(eager);

    // Nothing of the room was erased: it was never deleted.
    expect(await rawRoomRow(survivor, name)).not.toBeNull();
    const { bucket, messageId } = messageKey(kept.id);
    expect(await bobsCopiesIn(name, new Set([monthOfDay(bucket)]))).toEqual([messageId]);
    const history = (await gqlOk(survivor, HistoryDocument, { roomName: name, first: 10 }, alice.token)).room!.messages!;
    expect(history.edges.map((e) => e.node.content)).toContain('still here');
    expect(await rawChatRooms(survivor, bob.login)).toContain(name);
    expect(await rawChatRooms(survivor, alice.login)).toContain(name);
    // And its creator can delete it now.
    expect((await gqlOk(survivor, DeleteRoomDocument, { roomName: name }, alice.token)).deleteRoom).toBe(true);
  }, 60_000);
});

const UPLOAD = 'mutation Upload($file: File!) { uploadAttachment(file: $file) { id } }';
const POST_WITH_FILES = 'mutation Post($roomName: String!, $content: String!, $attachments: [ID!]) { postMessage(roomName: $roomName, content: $content, attachments: $attachments) { id } }';

/** Uploads `bytes` as a browser does (multipart, with the header no cross-site form can send): the upload's id. */
async function upload(user: TestUser, bytes: Buffer, filename: string): Promise<string> {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } }));
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append('0', new Blob([new Uint8Array(bytes)], { type: 'text/plain' }), filename);
  const res = await fetch(`${survivor.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${user.token}`, 'x-graphql-yoga-csrf': '1' }, body: form });
  const body = (await res.json()) as { data?: { uploadAttachment: { id: string } } };
  expect(body.data?.uploadAttachment.id, JSON.stringify(body)).toBeTruthy();
  return body.data!.uploadAttachment.id;
}

/**
 * A room holding what lives outside its partitions: a poll both people voted in, and a message with a file of
 * three chunks (600 KB of text). Returns the room, the poll's id and the file's id.
 */
async function roomHoldingVotesAndFiles(): Promise<{ room: string; pollId: string; fileId: string; messageId: string }> {
  const room = await roomWith(survivor, alice, [bob]);
  const pollId = (await gqlOk(survivor, PostPollDocument, { input: { roomName: room, question: 'Stay?', answers: ['Yes', 'No'] } }, alice.token)).postPoll.id;
  await gqlOk(survivor, VotePollDocument, { messageId: pollId, answers: [0] }, alice.token);
  await gqlOk(survivor, VotePollDocument, { messageId: pollId, answers: [1] }, bob.token);
  const fileId = await upload(bob, Buffer.alloc(600_000, 'a'), 'notes.txt');
  const posted = (await gql(survivor, POST_WITH_FILES, { roomName: room, content: 'the notes', attachments: [fileId] }, bob.token)) as {
    data?: { postMessage: { id: string } };
  };
  expect(posted.data?.postMessage.id, JSON.stringify(posted)).toBeTruthy();
  return { room, pollId, fileId, messageId: posted.data!.postMessage.id };
}

/** What a poll and a file have in storage: the poll's vote rows, the file's row, and its chunk rows. */
async function storedOutside(room: string, pollId: string, fileId: string) {
  const poll = messageKey(pollId);
  const votes = await cqlRows(survivor, 'SELECT voter FROM poll_votes WHERE room_name = ? AND message_id = ?', [room, poll.messageId]);
  const file = await cqlRows(survivor, 'SELECT id FROM attachments WHERE id = ?', [fileId]);
  const chunks = await cqlRows(survivor, 'SELECT chunk FROM attachment_chunks WHERE id = ?', [fileId]);
  return { votes: votes.length, fileRows: file.length, chunks: chunks.length };
}

describe("a room deletion drops what its messages hold outside the room's partitions", () => {
  it("drops its polls' votes and its messages' files, rows and bytes, and spares a file forwarded from another room", async () => {
    const { room, pollId, fileId, messageId } = await roomHoldingVotesAndFiles();
    expect(await storedOutside(room, pollId, fileId)).toEqual({ votes: 2, fileRows: 1, chunks: 3 });
    // A copy of the message in another room carries the file by reference: deleting that room leaves it.
    const elsewhere = await roomWith(survivor, alice, [bob]);
    await gqlOk(survivor, ForwardMessageDocument, { messageId, toRoom: elsewhere }, bob.token);
    expect((await gqlOk(survivor, DeleteRoomDocument, { roomName: elsewhere }, alice.token)).deleteRoom).toBe(true);
    expect(await storedOutside(room, pollId, fileId)).toEqual({ votes: 2, fileRows: 1, chunks: 3 });

    // A copy in the room itself names the file too: the file is still its original's, and goes with the room.
    await gqlOk(survivor, ForwardMessageDocument, { messageId, toRoom: room }, alice.token);
    expect((await gqlOk(survivor, DeleteRoomDocument, { roomName: room }, alice.token)).deleteRoom).toBe(true);
    expect(await storedOutside(room, pollId, fileId)).toEqual({ votes: 0, fileRows: 0, chunks: 0 });
    expect(await pendingCleanupsOf(room)).toEqual([]);
  });

  it('cut off between the votes and the files, leaves its cleanup listed, and the job drops the rest', async () => {
    const { room, pollId, fileId } = await roomHoldingVotesAndFiles();
    // The node stops answering as the cleanup drops the file's bytes: the request fails after the LWT.
    const cut = failNextStatement(survivor, /DELETE FROM attachment_chunks/);
    expect(codes(await gql(survivor, DeleteRoomDocument, { roomName: room }, alice.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(cut.fired()).toBe(true);
    expect(await rawRoomRow(survivor, room)).toBeNull();
    expect(confirmed(await pendingCleanupsOf(room))).toHaveLength(1);
    expect(await storedOutside(room, pollId, fileId)).toEqual({ votes: 0, fileRows: 1, chunks: 3 });

    const eager = await startApp({ env: { ROOM_CLEANUP_GRACE_MS: '0' } });
    await eventually(async () => (await pendingCleanupsOf(room)).length === 0, { timeoutMs: 30_000, what: 'the cleanup to finish' });
    await stopApp(eager);
    expect(await storedOutside(room, pollId, fileId)).toEqual({ votes: 0, fileRows: 0, chunks: 0 });
  }, 60_000);
});
