/**
 * The messenger's hot paths on the local node: sending (one logged batch of 4
 * statements), showing an inbox of 500 partners (the inbox partition and the unread one) and
 * marking a conversation read. Counts the CQL requests each one makes.
 */
import { randomBytes } from 'node:crypto';
import type { App } from '../../src/app.js';
import type { Statement } from '../../src/db/cassandra/client.js';
import { conversationKey, directMessage } from '../../src/resolvers/messenger/model.js';
import { newTimeUuid } from '../../src/timeuuids.js';
import {
  InboxSummaryDocument,
  MarkConversationReadDocument,
  SendDirectMessageDocument,
} from '../../test/generated/graphql.js';
import { gqlOk } from '../../test/testkit/http.js';
import { seedUserRow, signUp, type TestUser } from '../../test/testkit/data/users.js';
import { benchApp, stats } from '../kit/harness.js';
import { unreadBacklogSection } from '../kit/unread-backlog.js';

/** Counts the CQL requests (single statements and batches) the app sends while `fn` runs. */
async function counted<T>(app: App, fn: () => Promise<T>): Promise<{ value: T; reads: Map<string, number>; batches: number[] }> {
  const db = app.services.db;
  const execute = db.execute.bind(db);
  const batch = db.batch.bind(db);
  const reads = new Map<string, number>();
  const batches: number[] = [];
  db.execute = (stmt: Statement, ...rest) => {
    const table = /FROM (\w+)/.exec(stmt.cql)?.[1] ?? stmt.cql.slice(0, 20);
    reads.set(table, (reads.get(table) ?? 0) + 1);
    return execute(stmt, ...rest);
  };
  db.batch = (queries, ...rest) => {
    batches.push(queries.length);
    return batch(queries, ...rest);
  };
  try {
    return { value: await fn(), reads, batches };
  } finally {
    db.execute = execute;
    db.batch = batch;
  }
}

async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn(i);
    samples.push(performance.now() - start);
  }
  return samples;
}

const row = (name: string, samples: number[]) => {
  const s = stats(samples);
  return `| ${name} | ${s.n} | ${s.p50.toFixed(1)} | ${s.p95.toFixed(1)} | ${s.max.toFixed(1)} |`;
};

async function seedInbox(app: App, owner: TestUser, partners: number): Promise<void> {
  const { stores } = app.services;
  const start = Date.now() - partners * 1000;
  const logins = Array.from({ length: partners }, (_, i) => `bench_${randomBytes(4).toString('hex')}_${i}`);
  for (let i = 0; i < logins.length; i += 50) {
    await Promise.all(
      logins.slice(i, i + 50).map(async (login, j) => {
        await seedUserRow(app, login, new Date(start));
        const message = directMessage(newTimeUuid(new Date(start + (i + j) * 1000)), login, owner.login, `hi ${j}`);
        await stores.directMessages.send(conversationKey(login, owner.login), message);
      }),
    );
  }
}

export default async function inboxBench(): Promise<string> {
  const app = await benchApp();
  try {
    const [a, b, owner] = [await signUp(app), await signUp(app), await signUp(app)];
    await seedInbox(app, owner, 500);

    // Warm up prepared statements and connections.
    for (let i = 0; i < 20; i++) await gqlOk(app, SendDirectMessageDocument, { to: b.login, content: `warm ${i}` }, a.token);

    const sendCost = await counted(app, () => gqlOk(app, SendDirectMessageDocument, { to: b.login, content: 'counted' }, a.token));
    const inboxCost = await counted(app, () => gqlOk(app, InboxSummaryDocument, { first: 500 }, owner.token));
    const readCost = await counted(app, () => gqlOk(app, MarkConversationReadDocument, { with: a.login }, b.token));
    const inboxSize = inboxCost.value.conversations.edges.length;

    const sends = await timed(300, (i) => gqlOk(app, SendDirectMessageDocument, { to: b.login, content: `sequential ${i}` }, a.token));
    const concurrentStart = performance.now();
    await Promise.all(
      Array.from({ length: 100 }, (_, i) => gqlOk(app, SendDirectMessageDocument, { to: b.login, content: `concurrent ${i}` }, a.token)),
    );
    const concurrentMs = performance.now() - concurrentStart;
    const inboxLoads = await timed(50, () => gqlOk(app, InboxSummaryDocument, { first: 500 }, owner.token));
    // Each read has one fresh unread message to cover.
    const readOnly: number[] = [];
    for (let i = 0; i < 50; i++) {
      await gqlOk(app, SendDirectMessageDocument, { to: b.login, content: 'to be read' }, a.token);
      const start = performance.now();
      await gqlOk(app, MarkConversationReadDocument, { with: a.login }, b.token);
      readOnly.push(performance.now() - start);
    }

    const describe = (c: { reads: Map<string, number>; batches: number[] }) =>
      [
        ...[...c.reads].map(([table, n]) => `${n} read${n > 1 ? 's' : ''} of ${table}`),
        ...c.batches.map((n) => `1 logged batch of ${n} statements`),
      ].join(', ');

    return [
      '## CQL requests per operation (counted on the Database)',
      '',
      `- sendDirectMessage: ${describe(sendCost)} (users: the recipient-exists check, then the profiles the response selects)`,
      `- conversations(first: 500) on an inbox of ${inboxSize} partners: ${describe(inboxCost)} (users: partner profiles, 100 per DataLoader batch)`,
      `- markConversationRead: ${describe(readCost)} (inbox: the read point, then the row read back; users as for a send)`,
      '',
      '## Latency (ms, one client over HTTP, single local node)',
      '',
      '| operation | n | p50 | p95 | max |',
      '|---|---|---|---|---|',
      row('sendDirectMessage', sends),
      row(`conversations(first: 500), ${inboxSize} partners`, inboxLoads),
      row('markConversationRead', readOnly),
      '',
      `100 concurrent sends A→B: ${concurrentMs.toFixed(0)} ms in all (${(100_000 / concurrentMs).toFixed(0)} sends/s).`,
      '',
      ...(await unreadBacklogSection(app, { sender: a, withBacklog: await signUp(app), without: await signUp(app) })),
    ].join('\n');
  } finally {
    await app.stop();
  }
}
