/**
 * The room_readers backfill (`npm run readers:backfill`) against the real
 * node: read markers stored as every marker written before cql/017 was (in
 * room_read_markers, with no copy in room_readers) show in Message.seenBy
 * once it has run; a run stopped midway is resumed where it recorded it got
 * to; a second run changes nothing; a marker moved while it runs keeps its
 * newer copy; and with storage unreachable it says so and exits non-zero.
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { ReadersBackfillStore, type StoredMarker } from '../../src/db/rooms/readers-backfill.js';
import { backfillRoomReaders } from '../../src/resolvers/rooms/readers-backfill.js';
import { MarkRoomReadDocument, SeenByDocument } from '../generated/graphql.js';
import { startApp, testEnv } from '../testkit/app.js';
import { runCommandToExit } from '../testkit/app-process.js';
import { gqlOk } from '../testkit/http.js';
import { cqlRows } from '../testkit/cql.js';
import { messageKey, post, roomWith } from '../testkit/data/rooms.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { freePort } from '../testkit/free-port.js';

const CLI = fileURLToPath(new URL('../../src/cli/readers-backfill.ts', import.meta.url));

let app: App;
let author: TestUser;
let readers: TestUser[];
let store: ReadersBackfillStore;

beforeAll(async () => {
  app = await startApp();
  const users = await signUpMany(app, 5, 'rb');
  author = users[0]!;
  readers = users.slice(1).sort((x, y) => x.login.localeCompare(y.login));
  store = new ReadersBackfillStore(app.services.db);
});

/** Runs the command as an operator would, with the test's storage settings; its exit code and output. */
const runCli = (env: Record<string, string> = {}) => runCommandToExit(CLI, env);

/**
 * A room where every reader read up to a message of its own, each marker stored as one written before cql/017
 * was: in room_read_markers only (plain CQL, no LWT), with no copy. Joining wrote markers and their copies: each
 * copy is deleted at its own write time (so the tombstone hides that copy, never a later one), and each reader's
 * marker is then written over, later. Returns the room and the messages, oldest first.
 */
async function roomReadInTheOldForm(): Promise<{ room: string; messages: string[] }> {
  const room = await roomWith(app, author, readers);
  const messages: string[] = [];
  for (let i = 0; i < readers.length; i++) messages.push((await post(app, author, room, `message ${i}`)).id);
  for (const copy of await cqlRows(app, 'SELECT login, WRITETIME(read_up_to) AS written FROM room_readers WHERE room_name = ?', [room])) {
    await cqlRows(app, 'DELETE FROM room_readers USING TIMESTAMP ? WHERE room_name = ? AND login = ?', [copy.written, room, copy.login]);
  }
  for (const [i, reader] of readers.entries()) {
    await cqlRows(app, 'INSERT INTO room_read_markers (login, room_name, read_up_to) VALUES (?, ?, ?)', [reader.login, room, messageKey(messages[i]!).messageId]);
  }
  expect(await cqlRows(app, 'SELECT login FROM room_readers WHERE room_name = ?', [room])).toEqual([]);
  return { room, messages };
}

/** The readers' copies (room_readers) in the room as stored: login, marker and write time, by login. */
async function copiesOf(room: string) {
  const rows = await cqlRows(app, 'SELECT login, read_up_to, WRITETIME(read_up_to) AS written FROM room_readers WHERE room_name = ?', [room]);
  return rows
    .filter((r) => readers.some((reader) => reader.login === r.login))
    .map((r) => ({ login: r.login as string, readUpTo: r.read_up_to.toString() as string, written: r.written.toString() as string }))
    .sort((x, y) => x.login.localeCompare(y.login));
}

const seenBy = async (messageId: string) =>
  (await gqlOk(app, SeenByDocument, { messageId, first: 50 }, author.token)).message!.seenBy.edges.map((e) => e.node.login);

/** Every marker in the table, with its partition's token (as the backfill reads them). */
async function allMarkers(): Promise<Array<{ token: bigint; login: string; room: string }>> {
  const rows = await cqlRows(app, 'SELECT token(login) AS t, login, room_name, read_up_to FROM room_read_markers');
  return rows.filter((r) => r.read_up_to != null).map((r) => ({ token: BigInt(r.t.toString()), login: r.login, room: r.room_name }));
}

describe('npm run readers:backfill', () => {
  it('puts markers stored before room_readers into seenBy; a second run changes nothing', async () => {
    const { room, messages } = await roomReadInTheOldForm();
    // Without their copies, nobody has seen anything.
    expect(await seenBy(messages[0]!)).toEqual([]);

    await store.clearProgress();
    const first = await runCli();
    expect(first.code, first.stderr).toBe(0);
    const summary = /readers backfill \((.+)\): (\d+) read markers copied to room_readers, from the start/.exec(first.stdout);
    expect(summary, first.stdout + first.stderr).not.toBeNull();
    expect(summary![1]).toContain(`keyspace ${testEnv().CASSANDRA_KEYSPACE}`);
    expect(Number(summary![2])).toBeGreaterThanOrEqual(readers.length);

    // Reader i read up to message i: message 0 is seen by all of them, the last one by the last reader only.
    expect(await seenBy(messages[0]!)).toEqual(readers.map((r) => r.login));
    expect(await seenBy(messages.at(-1)!)).toEqual([readers.at(-1)!.login]);
    const copied = await copiesOf(room);
    expect(copied.map((c) => c.readUpTo)).toEqual(messages.map((id) => messageKey(id).messageId));

    // Again: the same cells at the same write times, and no progress left to resume from.
    const again = await backfillRoomReaders({ readersBackfill: store });
    expect(again.resumedFrom).toBeNull();
    expect(await copiesOf(room)).toEqual(copied);
    expect(await store.resumeToken()).toBeNull();
  });

  it('stopped midway, records where it got to; the next run resumes there and finishes', async () => {
    const { room, messages } = await roomReadInTheOldForm();
    await store.clearProgress();
    // One marker a page, stopped once it has recorded a page past the first partition: some markers before it.
    let firstReached: string | null = null;
    const stop = new Error('stopped midway');
    const interrupted = backfillRoomReaders(
      { readersBackfill: store },
      {
        pageRows: 1,
        onPage: (progress) => {
          firstReached ??= progress.reached;
          if (progress.reached !== firstReached) throw stop;
        },
      },
    );
    await expect(interrupted).rejects.toBe(stop);
    const recorded = await store.resumeToken();
    expect(recorded).not.toBeNull();
    const markers = await allMarkers();
    const from = BigInt(recorded!.toString());
    const fromThereOn = markers.filter((m) => m.token >= from);
    expect(fromThereOn.length).toBeLessThan(markers.length);

    const resumed = await backfillRoomReaders({ readersBackfill: store });
    expect(resumed.resumedFrom).toBe(recorded!.toString());
    // It read from the recorded partition on (that one again, whole), not from the start.
    expect(resumed.copied).toBe(fromThereOn.length);
    expect(await store.resumeToken()).toBeNull();
    expect(await seenBy(messages[0]!)).toEqual(readers.map((r) => r.login));
    expect((await copiesOf(room)).map((c) => c.readUpTo)).toEqual(messages.map((id) => messageKey(id).messageId));
  });

  it('leaves a marker moved while it runs with its newer copy', async () => {
    const { room, messages } = await roomReadInTheOldForm();
    await store.clearProgress();
    const newest = (await post(app, author, room, 'newest')).id;
    const mover = readers[0]!;
    // The backfill has read the first reader's marker; before it writes that marker's copy, the reader reads on,
    // and the live path writes the moved marker's copy. The backfill's copy, of the marker as it read it, lands last.
    let stale: string | undefined;
    const racing = new (class extends ReadersBackfillStore {
      override async copy(marker: StoredMarker): Promise<void> {
        if (marker.login === mover.login && marker.roomName === room && stale === undefined) {
          stale = marker.readUpTo;
          await gqlOk(app, MarkRoomReadDocument, { roomName: room, upTo: newest }, mover.token);
        }
        await super.copy(marker);
      }
    })(app.services.db);
    await backfillRoomReaders({ readersBackfill: racing });
    expect(stale).toBe(messageKey(messages[0]!).messageId);

    const marker = (await cqlRows(app, 'SELECT read_up_to FROM room_read_markers WHERE login = ? AND room_name = ?', [mover.login, room]))[0]!;
    expect(marker.read_up_to.toString()).toBe(messageKey(newest).messageId);
    const copies = await copiesOf(room);
    expect(copies.find((c) => c.login === mover.login)?.readUpTo).toBe(messageKey(newest).messageId);
    expect(await seenBy(newest)).toEqual([mover.login]);
    expect(await seenBy(messages[0]!)).toEqual(readers.map((r) => r.login));
  });

  it('says why it failed and exits non-zero when storage does not answer', async () => {
    const closed = await freePort();
    const run = await runCli({ CASSANDRA_CONTACT_POINTS: `127.0.0.1:${closed}` });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^readers backfill failed: .+\(running it again resumes where it stopped\)\n$/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
