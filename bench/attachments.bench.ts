/**
 * `npm run bench attachments`: a 10 MB file uploaded (GraphQL multipart over
 * HTTP) and downloaded (its signed link) through Parley, against the floor:
 * the same bytes written as the same 40 chunk rows, and read back, with the
 * driver alone (cassandra-driver, 4 writes in flight, 4 rows a read, as
 * Parley's store does). Alternating, one of each per round; medians.
 */
import { randomBytes } from 'node:crypto';
import { cql } from '../src/db/cassandra/client.js';
import { newTimeUuid } from '../src/timeuuids.js';
import { RegisterDocument } from '../test/generated/graphql.js';
import { gqlOk } from '../test/testkit/http.js';
import { benchApp, median } from './harness.js';

const FILE_BYTES = 10 * 1024 * 1024;
const CHUNK = 256 * 1024;
const ROUNDS = 7;
const UPLOAD = 'mutation Upload($file: File!) { uploadAttachment(file: $file) { id size url } }';

export default async function run(): Promise<string> {
  const app = await benchApp({ env: { ATTACHMENT_UPLOADS_PER_DAY: '1000' } });
  const db = app.services.db;
  const write = cql('INSERT INTO attachment_chunks (id, chunk, data) VALUES (?, ?, ?)', { idempotent: true });
  const read = cql('SELECT data FROM attachment_chunks WHERE id = ? AND chunk >= ? AND chunk <= ?', { idempotent: true });
  try {
    const stamp = Date.now().toString(36);
    const { register } = await gqlOk(app, RegisterDocument, {
      input: { login: `att_${stamp}`, password: 'correct horse battery', firstname: 'A', lastname: 'B', email: `att_${stamp}@example.test` },
    });
    const data = Buffer.concat([Buffer.from('plain text, then random bytes that are not: '), randomBytes(16)]).toString('hex');
    // UTF-8 text (hex digits): sniffed as text, 10 MB of it.
    const file = Buffer.alloc(FILE_BYTES, data);
    const parley = { up: [] as number[], down: [] as number[] };
    const floor = { up: [] as number[], down: [] as number[] };
    const mbps = (ms: number) => FILE_BYTES / 1024 / 1024 / (ms / 1000);
    for (let round = 0; round < ROUNDS; round++) {
      // Parley: the upload request, then the download of its link.
      const form = new FormData();
      form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } }));
      form.append('map', JSON.stringify({ 0: ['variables.file'] }));
      form.append('0', new Blob([new Uint8Array(file)]), 'big.txt');
      let t0 = performance.now();
      const res = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${register.token}`, 'x-graphql-yoga-csrf': '1' }, body: form });
      const body = (await res.json()) as { data?: { uploadAttachment: { url: string; size: number } }; errors?: unknown };
      parley.up.push(performance.now() - t0);
      if (!body.data) throw new Error(`upload failed: ${JSON.stringify(body.errors)}`);
      t0 = performance.now();
      const got = Buffer.from(await (await fetch(`${app.url}${body.data.uploadAttachment.url}`)).arrayBuffer());
      parley.down.push(performance.now() - t0);
      if (!got.equals(file)) throw new Error('the download differs from the upload');

      // The floor: the driver alone, the same rows.
      const id = newTimeUuid(new Date()).toString();
      t0 = performance.now();
      const inFlight = new Set<Promise<unknown>>();
      for (let c = 0; c * CHUNK < FILE_BYTES; c++) {
        const p = db.execute(write, [id, c, file.subarray(c * CHUNK, (c + 1) * CHUNK)]);
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
        if (inFlight.size >= 4) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      floor.up.push(performance.now() - t0);
      t0 = performance.now();
      const parts: Buffer[] = [];
      for (let c = 0; c * CHUNK < FILE_BYTES; c += 4) parts.push(...(await db.execute(read, [id, c, c + 3])).rows.map((r) => r.data as Buffer));
      floor.down.push(performance.now() - t0);
      if (!Buffer.concat(parts).equals(file)) throw new Error('the floor read back other bytes');
    }
    const row = (what: string, p: number[], f: number[]) =>
      `| ${what} | ${mbps(median(p)).toFixed(1)} | ${mbps(median(f)).toFixed(1)} | ${(median(f) / median(p)).toFixed(2)} | ${median(p).toFixed(0)} | ${median(f).toFixed(0)} |`;
    return [
      `One app in-process on the local node. A ${FILE_BYTES / 1024 / 1024} MB file (UTF-8 text), ${ROUNDS} rounds, each: Parley's upload (multipart`,
      'over HTTP, the mutation answered) and download (GET of its signed link, read whole), then the floor: the driver alone',
      'writing the same 40 rows of 256 KiB (4 in flight) and reading them back (4 a request). Medians.',
      '',
      '| direction | Parley MB/s | driver alone MB/s | Parley/floor | Parley ms | floor ms |',
      '|---|---|---|---|---|---|',
      row('upload (write)', parley.up, floor.up),
      row('download (read)', parley.down, floor.down),
    ].join('\n');
  } finally {
    await app.stop();
  }
}
