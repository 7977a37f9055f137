/**
 * The search backfill (`npm run search:backfill`) against the real node:
 * messages stored without search terms, as every message posted before
 * cql/008 was, are found once it has run, and only by their current words;
 * hidden, deleted and system messages stay unfound; an edit landing between
 * its read and its write wins; running it again changes nothing; and with
 * storage unreachable it says so and exits non-zero.
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../../src/app.js';
import { SearchBackfillStore, type UnindexedCandidate } from '../../../../src/db/rooms/messages/search-backfill.js';
import { backfillSearchTerms } from '../../../../src/resolvers/rooms/messages/search-backfill.js';
import { decodeMessageId } from '../../../../src/resolvers/rooms/ids.js';
import { DeleteMessageDocument, DeleteRoomDocument, EditMessageDocument, HideMessageDocument, SearchMessagesDocument } from '../../../generated/graphql.js';
import { startApp, testEnv } from '../../../testkit/app.js';
import { runCommandToExit } from '../../../testkit/app-process.js';
import { codes, gql, gqlOk } from '../../../testkit/http.js';
import { signUp, type TestUser } from '../../../testkit/data/users.js';
import { post, roomWith } from '../../../testkit/data/rooms.js';
import { cqlRow } from '../../../testkit/cql.js';
import { failNextStatement, onNextStatement } from '../../../testkit/faults/statement-faults.js';
import { freePort } from '../../../testkit/free-port.js';
import { cassandraProxy } from '../../../testkit/faults/tcp-proxy.js';
import { seedHistory, spreadOverDays } from '../../../testkit/data/seed-history.js';

const CLI = fileURLToPath(new URL('../../../../src/cli/search-backfill.ts', import.meta.url));

let app: App;
let alice: TestUser;
let bob: TestUser;
beforeAll(async () => {
  app = await startApp();
  [alice, bob] = await Promise.all([signUp(app, { firstname: 'Alice' }), signUp(app, { firstname: 'Bob' })]);
});

const found = async (roomName: string, query: string) =>
  (await gqlOk(app, SearchMessagesDocument, { roomName, query, first: 50 }, alice.token)).searchMessages.edges.map((e) => e.node.content);

/** Every message of the room as one posted before cql/008 is stored: without terms. */
async function dropTermsOfRoom(roomName: string, ids: string[]) {
  for (const id of ids) {
    const key = decodeMessageId('id', id);
    await cqlRow(app, 'UPDATE chat_room_messages SET terms = null WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [
      roomName,
      key.bucket,
      key.messageId,
    ]);
  }
}

/** Runs the command as an operator would, with the test's storage settings; its exit code and output. */
const runCli = (env: Record<string, string> = {}) => runCommandToExit(CLI, env);

/** The backfill's stores, over one room's messages only: its first write is one of that room's. */
const backfillOf = (room: string) => ({
  rooms: app.services.stores.rooms,
  searchBackfill: new (class extends SearchBackfillStore {
    // The room's messages as one page, the whole table read first: other tests' rows in the same table could
    // otherwise split them over two pages, and a page read after a test's edits finds its messages indexed already.
    async *pages(pageSize: number): AsyncGenerator<UnindexedCandidate[]> {
      const mine: UnindexedCandidate[] = [];
      for await (const page of super.pages(pageSize)) mine.push(...page.filter((c) => c.roomName === room));
      yield mine;
    }
  })(app.services.db),
});

/** A message's stored terms (sorted) and whether its row still holds its content. */
async function storedMessage(room: string, id: string) {
  const key = decodeMessageId('id', id);
  const row = await cqlRow(app, 'SELECT content, terms FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [
    room,
    key.bucket,
    key.messageId,
  ]);
  return { content: (row?.content as string | null) ?? null, terms: row?.terms ? [...(row.terms as Set<string>)].sort() : null };
}

describe('npm run search:backfill', () => {
  it('makes messages stored without terms findable, by their current words only, and a second run changes nothing', async () => {
    const room = await roomWith(app, alice, [bob]); // a system message: "Bob joins the room"
    const plain = await post(app, bob, room, 'An apricot orchard');
    const edited = await post(app, bob, room, 'apricot jam');
    await gqlOk(app, EditMessageDocument, { messageId: edited.id, content: 'fig jam' }, bob.token);
    const hidden = await post(app, bob, room, 'apricot secret');
    await gqlOk(app, HideMessageDocument, { messageId: hidden.id }, bob.token);
    const deleted = await post(app, bob, room, 'apricot gone');
    await gqlOk(app, DeleteMessageDocument, { messageId: deleted.id }, bob.token);
    await dropTermsOfRoom(room, [plain.id, edited.id, hidden.id, deleted.id]);
    expect(await found(room, 'apricot')).toEqual([]);
    expect(await found(room, 'fig')).toEqual([]);

    const first = await runCli();
    expect(first.code).toBe(0);
    const summary = /search backfill \((.+)\): (\d+) messages read, (\d+) given their search terms, (\d+) changed meanwhile/.exec(first.stdout);
    expect(summary, first.stdout + first.stderr).not.toBeNull();
    // It says where it ran: an operator who forgot the environment sees it.
    expect(summary![1]).toContain(`keyspace ${testEnv().CASSANDRA_KEYSPACE}`);
    expect(Number(summary![3])).toBeGreaterThanOrEqual(2);

    expect(await found(room, 'apricot')).toEqual(['An apricot orchard']);
    expect(await found(room, 'fig jam')).toEqual(['fig jam']);
    expect(await found(room, 'joins')).toEqual([]);
    const termsOf = async (id: string) => {
      const key = decodeMessageId('id', id);
      const row = await cqlRow(app, 'SELECT terms FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?', [
        room,
        key.bucket,
        key.messageId,
      ]);
      return row?.terms ? [...(row.terms as Set<string>)].sort() : null;
    };
    expect(await termsOf(hidden.id)).toBeNull();
    expect(await termsOf(deleted.id)).toBeNull();

    const second = await runCli();
    expect(second.code).toBe(0);
    expect(await found(room, 'apricot')).toEqual(['An apricot orchard']);
    expect(await termsOf(plain.id)).toEqual(['an', 'apricot', 'orchard']);
  });

  it('leaves a message edited between its read and its write to the edit', async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, bob, room, 'a walnut tree');
    await dropTermsOfRoom(room, [m.id]);
    const store = backfillOf(room);
    const edit = onNextStatement(app, /SET terms = \? WHERE/, async () => {
      await gqlOk(app, EditMessageDocument, { messageId: m.id, content: 'a chestnut tree' }, bob.token);
    });

    const done = await backfillSearchTerms(store);
    expect(edit.fired()).toBe(true);
    expect(done).toMatchObject({ indexed: 0, changedMeanwhile: 1 });
    expect(await found(room, 'chestnut')).toEqual(['a chestnut tree']);
    expect(await found(room, 'walnut')).toEqual([]);
  });

  it('40 messages edited after the backfill read them or while it writes: each ends with the terms of its current words', async () => {
    const room = await roomWith(app, alice, [bob]);
    const posted: Array<Awaited<ReturnType<typeof post>>> = [];
    for (let i = 0; i < 40; i++) posted.push(await post(app, bob, room, `first draft ${i}`));
    await dropTermsOfRoom(room, posted.map((m) => m.id));
    // Once the backfill has read them, before its first write: half the messages are edited (each write the
    // backfill holds for them is stale), and the other half are edited twice while its writes go out.
    let racing: Promise<unknown> | undefined;
    const edit = (i: number, content: string) => gqlOk(app, EditMessageDocument, { messageId: posted[i]!.id, content }, bob.token);
    const indexes = posted.map((_, i) => i);
    const [even, odd] = [indexes.filter((i) => i % 2 === 0), indexes.filter((i) => i % 2 === 1)];
    const started = onNextStatement(app, /SET terms = \? WHERE/, async () => {
      await Promise.all(even.map((i) => edit(i, `final words ${i}`)));
      racing = Promise.all(odd.map(async (i) => (await edit(i, `second draft ${i}`), await edit(i, `final words ${i}`))));
    });

    const done = await backfillSearchTerms(backfillOf(room));
    await racing;
    expect(started.fired()).toBe(true);
    expect(done.indexed + done.changedMeanwhile).toBe(40);
    for (const [i, m] of posted.entries()) {
      expect(await storedMessage(room, m.id)).toEqual({ content: `final words ${i}`, terms: ['final', String(i), 'words'].sort() });
    }
    expect(await found(room, 'draft')).toEqual([]);
    expect(await found(room, 'final words')).toHaveLength(40);
  });

  it('leaves the messages of a deleted room whose cleanup is still pending alone', async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, bob, room, 'a hazel hedge');
    await dropTermsOfRoom(room, [m.id]);
    // The deletion applies, then its server is lost before the cleanup: the messages wait for the recovery job.
    onNextStatement(app, /INSERT INTO pending_room_cleanups/, async () => {
      failNextStatement(app, /INSERT INTO pending_room_cleanups/);
    });
    expect(codes(await gql(app, DeleteRoomDocument, { roomName: room }, alice.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(await storedMessage(room, m.id)).toEqual({ content: 'a hazel hedge', terms: null });

    const done = await backfillSearchTerms(backfillOf(room));
    expect(done).toMatchObject({ indexed: 0, changedMeanwhile: 0 });
    // A write now would outlive the cleanup's deletes, stamped at the deletion.
    expect(await storedMessage(room, m.id)).toEqual({ content: 'a hazel hedge', terms: null });
  });

  it('exits non-zero, saying so, when storage stops answering midway', async () => {
    // Enough rows that the scan takes several pages: at least one of them comes back after the cut.
    const start = new Date();
    const room = await roomWith(app, alice, [bob]);
    await seedHistory(app, { name: room, createdAt: start }, { login: bob.login, firstname: 'Bob', lastname: '' }, spreadOverDays(start, 2, 3000));
    const { proxy, env } = await cassandraProxy();
    try {
      // Cut once the command has read about a page of messages (after connecting, which moves a few KB).
      const cli = runCli(env);
      proxy.onceRelayed(150_000, () => void proxy.close());
      const run = await cli;
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^search backfill failed: .+\(running it again is safe\)\n$/);
      expect(run.stdout).not.toMatch(/messages read/);
    } finally {
      if (proxy.isOpen) await proxy.close();
    }
  });

  it('says why it failed and exits non-zero when storage does not answer', async () => {
    const closed = await freePort();
    const run = await runCli({ CASSANDRA_CONTACT_POINTS: `127.0.0.1:${closed}` });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^search backfill failed: .+\(running it again is safe\)\n$/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
