/**
 * `npm run bench rooms-history`: what a page of room history costs in CQL
 * queries (one bucket vs several) and how long walking a 10,000-message,
 * 60-day history takes through the API.
 */
import type { App } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { CreateRoomDocument, HistoryDocument, PostMessageDocument, RegisterDocument } from '../../test/generated/graphql.js';
import { gqlOk } from '../../test/testkit/http.js';
import { seedHistory, spreadOverDays } from '../../test/testkit/data/seed-history.js';
import { benchApp, stats } from '../kit/harness.js';

const DAY = 86_400_000;
const KEYSPACE = 'parley_bench_rooms';

class Manual implements Clock {
  constructor(public at: Date) {}
  now() {
    return new Date(this.at);
  }
}

type Args = { first?: number; after?: string; last?: number; before?: string };

async function page(app: App, token: string, name: string, args: Args) {
  const q0 = app.services.db.queryCount;
  const t0 = performance.now();
  const data = await gqlOk(app, HistoryDocument, { roomName: name, ...args }, token);
  return { ...data.room!.messages, ms: performance.now() - t0, queries: app.services.db.queryCount - q0 };
}

async function walk(app: App, token: string, name: string, size: number, dir: 'back' | 'forward') {
  const t0 = performance.now();
  const q0 = app.services.db.queryCount;
  let cursor: string | undefined;
  let messages = 0;
  let pages = 0;
  const perPage: number[] = [];
  for (;;) {
    const p = await page(app, token, name, dir === 'back' ? { first: size, after: cursor } : { last: size, before: cursor });
    pages += 1;
    messages += p.edges.length;
    perPage.push(p.queries);
    const more = dir === 'back' ? p.pageInfo.hasNextPage : p.pageInfo.hasPreviousPage;
    if (!more) break;
    cursor = p.pageInfo.endCursor!;
  }
  return { ms: performance.now() - t0, queries: app.services.db.queryCount - q0, messages, pages, perPage: stats(perPage) };
}

export default async function run(): Promise<string> {
  const clock = new Manual(new Date('2024-01-01T00:00:00Z'));
  const app = await benchApp({ clock, env: { CASSANDRA_KEYSPACE: KEYSPACE } });
  try {
    const login = `bench_${Date.now().toString(36)}`;
    const { register } = await gqlOk(app, RegisterDocument, {
      input: { login, password: 'bench-password', firstname: 'Bench', lastname: 'Mark', email: `${login}@example.test` },
    });
    const token = register.token;
    const author = { login, firstname: 'Bench', lastname: 'Mark' };
    const room = async (tag: string) => {
      const name = `${tag}-${Date.now().toString(36)}`;
      await gqlOk(app, CreateRoomDocument, { input: { name } }, token);
      return { name, createdAt: clock.now() };
    };

    // 1. A page of 50 inside one day bucket: 120 messages posted on one day.
    clock.at = new Date('2024-01-01T00:00:00Z');
    const oneDay = await room('one-day');
    clock.at = new Date('2024-01-01T09:00:00Z');
    await seedHistory(app, oneDay, author, Array.from({ length: 120 }, (_, i) => new Date(clock.at.getTime() + i * 1000)));
    const firstOne = await page(app, token, oneDay.name, { first: 50 });
    const nextOne = await page(app, token, oneDay.name, { first: 50, after: firstOne.pageInfo.endCursor! });

    // 2. A page of 50 across three day buckets: 20 messages a day, with an empty day between each.
    const threeDays = await room('three-days');
    await seedHistory(app, threeDays, author, spreadOverDays(clock.at, 12, 120, (d) => d % 2 === 1));
    const firstThree = await page(app, token, threeDays.name, { first: 50 });
    const nextThree = await page(app, token, threeDays.name, { first: 50, after: firstThree.pageInfo.endCursor! });
    const buckets = (p: typeof firstThree) => new Set(p.edges.map((e) => e.node.createdAt.slice(0, 10))).size;

    // 3. Time for single posts (the write side of the same tables), for scale.
    const postMs: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      await gqlOk(app, PostMessageDocument, { roomName: oneDay.name, content: `post ${i}` }, token);
      postMs.push(performance.now() - t0);
    }

    // 4. 10,000 messages over 60 days (every 7th day empty), walked to the first message.
    clock.at = new Date('2024-02-01T00:00:00Z');
    const big = await room('ten-k');
    const seedStart = performance.now();
    await seedHistory(app, big, author, spreadOverDays(clock.at, 60, 10_000, (d) => d % 7 === 3));
    const seedMs = performance.now() - seedStart;
    clock.at = new Date(clock.at.getTime() + 61 * DAY);
    const walks = [
      { label: 'newest → oldest, first: 50', ...(await walk(app, token, big.name, 50, 'back')) },
      { label: 'newest → oldest, first: 200', ...(await walk(app, token, big.name, 200, 'back')) },
      { label: 'oldest → newest, last: 200', ...(await walk(app, token, big.name, 200, 'forward')) },
    ];
    for (const w of walks) if (w.messages !== 10_000) throw new Error(`${w.label}: walked ${w.messages} messages, not 10,000`);

    const p = (ms: number) => ms.toFixed(1);
    const post = stats(postMs);
    return [
      '## Queries per history page of 50',
      '',
      'Counted with `Database.queryCount` around one `room { messages }` request: the room row (participants check',
      'and creation floor), the partition reads, and bucket listings from `messages_bucket`. The session check reads',
      'no table. A page reads one row more than it returns, to know whether another page exists.',
      '',
      '| Page | Buckets in page | CQL queries | Time (ms) |',
      '| --- | ---: | ---: | ---: |',
      `| first page, all in one day bucket | ${buckets(firstOne)} | ${firstOne.queries} | ${p(firstOne.ms)} |`,
      `| next page, same bucket (from a cursor) | ${buckets(nextOne)} | ${nextOne.queries} | ${p(nextOne.ms)} |`,
      `| first page, spanning three day buckets | ${buckets(firstThree)} | ${firstThree.queries} | ${p(firstThree.ms)} |`,
      `| next page, spanning three day buckets | ${buckets(nextThree)} | ${nextThree.queries} | ${p(nextThree.ms)} |`,
      '',
      'So a page costs 1 (room) + 1 per bucket it reads (including the one its look-ahead row falls in) + 1 listing',
      "of `messages_bucket` when it leaves the cursor's bucket (up to 8 buckets per listing). Empty days cost nothing.",
      '',
      `postMessage over HTTP, 50 sequential: p50 ${p(post.p50)} ms, p95 ${p(post.p95)} ms.`,
      '',
      '## The 10,000-message history walk',
      '',
      `10,000 messages over 60 days (every seventh day empty, ~193 a day), seeded through the store in ${(seedMs / 1000).toFixed(1)} s`,
      '(64 writes in flight), then paged through the GraphQL API over HTTP, one page after another, to the first message.',
      '',
      '| Walk | Pages | Total time (s) | Per page, average (ms) | CQL queries total | Queries per page (min / p50 / max) |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...walks.map(
        (w) =>
          `| ${w.label} | ${w.pages} | ${(w.ms / 1000).toFixed(2)} | ${p(w.ms / w.pages)} | ${w.queries} | ${w.perPage.min} / ${w.perPage.p50} / ${w.perPage.max} |`,
      ),
    ].join('\n');
  } finally {
    // The bench keyspace holds 10,000+ rows per run: drop it so runs stay independent.
    await app.services.db.client.execute(`DROP KEYSPACE IF EXISTS ${KEYSPACE}`).catch(() => undefined);
    await app.stop();
  }
}
