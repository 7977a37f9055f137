/**
 * What an unread backlog costs a send, for the inbox bench: the unread ids of
 * one conversation as elements of a set in the inbox row (cql/003, before) and
 * as rows of inbox_unread (cql/015, now), beside a backlog of BACKLOG ids and
 * beside none. The four contenders write in alternating rounds on the same
 * node, each at CONCURRENCY writes in flight; then sendDirectMessage through
 * the API, to a recipient with the backlog from the sender and to one without.
 */
import { randomBytes } from 'node:crypto';
import type { App } from '../../src/app.js';
import { cql, type Database, isStorageUnavailable, Long, type Statement } from '../../src/db/cassandra/client.js';
import { newTimeUuid, timeMicros } from '../../src/timeuuids.js';
import { SendDirectMessageDocument } from '../../test/generated/graphql.js';
import { codes, gql } from '../../test/testkit/http.js';
import type { TestUser } from '../../test/testkit/data/users.js';
import { median } from './harness.js';

const BACKLOG = 50_000;
const ROUNDS = 5;
const WRITES_PER_ROUND = 2_000;
const SENDS_PER_ROUND = 300;
const CONCURRENCY = 32;
/** Ids per seeding statement: one set literal, or one single-partition unlogged batch of rows. */
const SEED_CHUNK = 1_000;

const SET_APPEND = cql('UPDATE inbox USING TIMESTAMP ? SET unread = unread + ? WHERE owner = ? AND partner = ?', { idempotent: true });
const ROW_INSERT = cql('INSERT INTO inbox_unread (owner, partner, id) VALUES (?, ?, ?) USING TIMESTAMP ?', { idempotent: true });

interface Target {
  name: string;
  /** The conversation a round writes to: the backlog's, or a new one each round (so "none" stays near none). */
  partner(): string;
  /** The statement and parameters that record one new unread id from `partner`. */
  write(partner: string): { stmt: Statement; params: unknown[] };
}

const fresh = () => `empty-${randomBytes(4).toString('hex')}`;

function freshId() {
  const id = newTimeUuid(new Date(), 'microsecond');
  return { id, at: Long.fromNumber(timeMicros(id)) };
}

const setTarget = (name: string, owner: string, partner: () => string): Target => ({
  name,
  partner,
  write: (partner) => {
    const { id, at } = freshId();
    return { stmt: SET_APPEND, params: [at, [id], owner, partner] };
  },
});

const rowTarget = (name: string, owner: string, partner: () => string): Target => ({
  name,
  partner,
  write: (partner) => {
    const { id, at } = freshId();
    return { stmt: ROW_INSERT, params: [owner, partner, id, at] };
  },
});

/**
 * A seeding write, tried up to 3 times while the node cannot answer in time
 * (a busy 2-core machine's node sometimes times one out): each is idempotent
 * (a set append, rows by key).
 */
async function seedWrite(write: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await write();
      return;
    } catch (err) {
      if (attempt >= 3 || !isStorageUnavailable(err)) throw err;
    }
  }
}

/**
 * `n` unread ids from `partner` to `owner`, in chunks, each id written once
 * as a row (cql/015) and, with `inSet`, into the set too (cql/003).
 */
async function seedBacklog(db: Database, owner: string, partner: string, n: number, inSet: boolean): Promise<void> {
  for (let done = 0; done < n; done += SEED_CHUNK) {
    const ids = Array.from({ length: Math.min(SEED_CHUNK, n - done) }, () => freshId());
    const at = Long.fromNumber(Date.now() * 1000);
    if (inSet) await seedWrite(() => db.execute(SET_APPEND, [at, ids.map((x) => x.id), owner, partner]));
    await seedWrite(() =>
      db.batch(
        ids.map(({ id, at }) => ({ stmt: ROW_INSERT, params: [owner, partner, id, at] })),
        { logged: false },
      ),
    );
  }
}

/** A round's outcome: calls per second (those that failed included), and how many the node could not serve in time. */
interface Round {
  perSecond: number;
  unserved: number;
}

/**
 * `total` calls of `fn`, `concurrency` at a time. A call the node could not
 * serve in time (`fn` rejects with a storage-unavailable error, or resolves
 * to false) is counted, not fatal: how often a store times out under this
 * load is part of what it costs.
 */
async function rate(total: number, concurrency: number, fn: () => Promise<boolean>): Promise<Round> {
  let started = 0;
  let unserved = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started += 1;
        try {
          if (!(await fn())) unserved += 1;
        } catch (err) {
          if (!isStorageUnavailable(err)) throw err;
          unserved += 1;
        }
      }
    }),
  );
  return { perSecond: total / ((performance.now() - t0) / 1000), unserved };
}

interface Measured {
  /** Median calls per second over the measured rounds. */
  perSecond: number;
  /** Calls not served in time, over the measured rounds. */
  unserved: number;
}

/** Medians over ROUNDS rounds, the contenders taking turns, each round starting one further on. */
async function alternate(contenders: Array<{ name: string; run: () => Promise<Round> }>): Promise<Map<string, Measured>> {
  const samples = new Map(contenders.map((c) => [c.name, [] as Round[]]));
  for (const c of contenders) await c.run(); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const c = contenders[(round + i) % contenders.length]!;
      samples.get(c.name)!.push(await c.run());
    }
  }
  return new Map(
    [...samples].map(([name, rounds]) => [
      name,
      { perSecond: median(rounds.map((r) => r.perSecond)), unserved: rounds.reduce((n, r) => n + r.unserved, 0) },
    ]),
  );
}

export async function unreadBacklogSection(app: App, users: { sender: TestUser; withBacklog: TestUser; without: TestUser }): Promise<string[]> {
  const db = app.services.db;
  const owner = `bench_backlog_${randomBytes(4).toString('hex')}`;
  await seedBacklog(db, owner, 'full', BACKLOG, true);
  // The API's recipient with a backlog from the sender: rows only, as every send since cql/015 writes them.
  const { sender, withBacklog, without } = users;
  await seedBacklog(db, withBacklog.login, sender.login, BACKLOG, false);

  const targets = [
    setTarget(`set (cql/003), ${BACKLOG.toLocaleString('en')} unread`, owner, () => 'full'),
    setTarget('set (cql/003), none unread', owner, fresh),
    rowTarget(`rows (cql/015), ${BACKLOG.toLocaleString('en')} unread`, owner, () => 'full'),
    rowTarget('rows (cql/015), none unread', owner, fresh),
  ];
  const writes = await alternate(
    targets.map((t) => ({
      name: t.name,
      run: () => {
        const partner = t.partner();
        return rate(WRITES_PER_ROUND, CONCURRENCY, async () => {
          const { stmt, params } = t.write(partner);
          await db.execute(stmt, params);
          return true;
        });
      },
    })),
  );
  // A send the API answers SERVICE_UNAVAILABLE is one the node did not serve in time; any other error stops the bench.
  const send = (to: TestUser) => async () => {
    const result = await gql(app, SendDirectMessageDocument, { to: to.login, content: 'a backlog bench message' }, sender.token);
    if (!result.errors?.length) return true;
    if (codes(result).every((code) => code === 'SERVICE_UNAVAILABLE')) return false;
    throw new Error(`sendDirectMessage failed: ${JSON.stringify(result.errors)}`);
  };
  const sends = await alternate([
    { name: 'backlog', run: () => rate(SENDS_PER_ROUND, CONCURRENCY, send(withBacklog)) },
    { name: 'none', run: () => rate(SENDS_PER_ROUND, CONCURRENCY, send(without)) },
  ]);

  const w = (name: string) => writes.get(name)!.perSecond;
  const [setFull, setEmpty, rowsFull, rowsEmpty] = targets.map((t) => w(t.name));
  const unservedSends = sends.get('backlog')!.unserved + sends.get('none')!.unserved;
  return [
    `## An unread backlog (${BACKLOG.toLocaleString('en')} unread messages in one conversation)`,
    '',
    `One unread id written per request, ${CONCURRENCY} in flight, ${WRITES_PER_ROUND} per round; the four take turns over ${ROUNDS} rounds`,
    'after a warm-up each (medians). A set is how cql/003 stored them, rows how cql/015 does. Timed out: writes the node',
    `did not serve in time (timed out or overloaded), over the ${ROUNDS} measured rounds; they count in writes/s.`,
    '',
    '| unread ids stored as | writes/s | timed out |',
    '|---|---|---|',
    ...targets.map((t) => `| ${t.name} | ${w(t.name).toFixed(0)} | ${writes.get(t.name)!.unserved} |`),
    '',
    `Beside the backlog against beside none: set ${(setFull! / setEmpty!).toFixed(2)}, rows ${(rowsFull! / rowsEmpty!).toFixed(2)}.`,
    '',
    `sendDirectMessage through the API (${CONCURRENCY} in flight, ${SENDS_PER_ROUND} per round, alternating, medians): to a recipient with`,
    `${BACKLOG.toLocaleString('en')} unread from the sender ${sends.get('backlog')!.perSecond.toFixed(0)} sends/s, to one with none ${sends.get('none')!.perSecond.toFixed(0)}`,
    `(ratio ${(sends.get('backlog')!.perSecond / sends.get('none')!.perSecond).toFixed(2)}); ${unservedSends} answered SERVICE_UNAVAILABLE.`,
  ];
}
