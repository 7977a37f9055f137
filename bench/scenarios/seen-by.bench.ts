/**
 * `npm run bench seen-by`: what Message.seenBy costs on a page of history, in
 * CQL queries and time, in a room of 1,000 participants beside one of 10: a
 * history page of 50 messages, each with seenBy(first: 5) { count … }. The
 * participants beyond the creator are written straight into the room's row
 * and their markers into room_readers (no sign-up, no join per person), half
 * of them having read up to the page's middle and half to its newest message.
 */
import { cql } from '../../src/db/cassandra/client.js';
import { CreateRoomDocument, HistorySeenByDocument, PostMessageDocument, RegisterDocument } from '../../test/generated/graphql.js';
import { gqlOk } from '../../test/testkit/http.js';
import { benchApp, median } from '../kit/harness.js';

const PARTICIPANTS = [10, 1000];
const MESSAGES = 50;
const RUNS = 7;

export default async function run(): Promise<string> {
  const app = await benchApp();
  const db = app.services.db;
  const addParticipants = cql('UPDATE chat_rooms SET participants = participants + ? WHERE room_name = ?', { idempotent: true });
  const addReader = cql('INSERT INTO room_readers (room_name, login, read_up_to) VALUES (?, ?, ?)', { idempotent: true });
  try {
    const stamp = Date.now().toString(36);
    const creator = await gqlOk(app, RegisterDocument, {
      input: { login: `seen_${stamp}`, password: 'correct horse battery', firstname: 'Seen', lastname: 'By', email: `seen_${stamp}@example.test` },
    });
    const token = creator.register.token;
    const rooms: Array<{ participants: number; name: string }> = [];
    for (const participants of PARTICIPANTS) {
      const name = `seen-${participants}-${stamp}`;
      await gqlOk(app, CreateRoomDocument, { input: { name } }, token);
      const ids: string[] = [];
      for (let i = 0; i < MESSAGES; i++) ids.push((await gqlOk(app, PostMessageDocument, { roomName: name, content: `m${i}` }, token)).postMessage.id);
      const keys = ids.map((id) => Buffer.from(id, 'base64url').toString('utf8').split('|')[3]!);
      const people = Array.from({ length: participants - 1 }, (_, i) => ({ login: `reader${i}_${stamp}`, firstname: 'R', lastname: String(i) }));
      for (let i = 0; i < people.length; i += 100) await db.execute(addParticipants, [new Set(people.slice(i, i + 100)), name]);
      for (let i = 0; i < people.length; i += 50) {
        await db.batch(
          people.slice(i, i + 50).map((p, j) => ({ stmt: addReader, params: [name, p.login, (i + j) % 2 ? keys[MESSAGES / 2]! : keys.at(-1)!] })),
          { logged: false },
        );
      }
      rooms.push({ participants, name });
    }
    const measure = async (name: string) => {
      const q0 = db.queryCount;
      const t0 = performance.now();
      const data = await gqlOk(app, HistorySeenByDocument, { roomName: name }, token);
      const ms = performance.now() - t0;
      const counts = data.room!.messages.edges.map((e) => e.node.seenBy.count);
      return { ms, queries: db.queryCount - q0, counts };
    };
    const results = new Map<number, { ms: number[]; queries: number[]; maxCount: number }>(PARTICIPANTS.map((p) => [p, { ms: [], queries: [], maxCount: 0 }]));
    // Warm both, then alternate them.
    for (const r of rooms) await measure(r.name);
    for (let run = 0; run < RUNS; run++) {
      for (const r of rooms) {
        const m = await measure(r.name);
        const into = results.get(r.participants)!;
        into.ms.push(m.ms);
        into.queries.push(m.queries);
        into.maxCount = Math.max(...m.counts);
      }
    }
    const small = results.get(PARTICIPANTS[0]!)!;
    const large = results.get(PARTICIPANTS[1]!)!;
    return [
      `One app in-process on the local node. A page of ${MESSAGES} messages, each selecting seenBy(first: 5) { count edges { node { login } } },`,
      `in a room of ${PARTICIPANTS[0]} participants and one of ${PARTICIPANTS[1]}, alternating, ${RUNS} runs each after a warm-up; queries counted`,
      'with Database.queryCount around the request, time as the median.',
      '',
      '| participants | CQL queries per page | of which for seenBy | highest seenBy count on the page | median ms per page |',
      '|---|---|---|---|---|',
      ...PARTICIPANTS.map((p) => {
        const r = results.get(p)!;
        return `| ${p.toLocaleString('en-US')} | ${median(r.queries)} | 1 (the room's markers) | ${r.maxCount} | ${median(r.ms).toFixed(1)} |`;
      }),
      '',
      `Time ratio, ${PARTICIPANTS[1]} against ${PARTICIPANTS[0]} participants: ${(median(large.ms) / median(small.ms)).toFixed(2)} (measured side by side in this run).`,
    ].join('\n');
  } finally {
    await app.stop();
  }
}
