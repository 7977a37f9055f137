/**
 * `npm run bench attachments`: a 10 MB file uploaded (GraphQL multipart over
 * HTTP) and downloaded (its signed link) through Parley, a process of its own
 * as in production, against the floor: the same bytes written as the same 40
 * chunk rows, and read back, with the driver alone (cassandra-driver in this
 * process, 4 writes in flight, 4 rows a read, as Parley's store does).
 * Alternating, one of each per round, with a third contender: the same body
 * sent to a server that only reads it (the transfer's own floor); medians.
 * First, the server's memory while 4 uploads of 10 MB run at once: its
 * resident set sampled from /proc every few milliseconds (and its high-water
 * mark), against the same process idle.
 * The CPU each side spends per file is read from /proc (the server process)
 * and process.cpuUsage (this one, for the floor and for the upload's client),
 * the steadier figures on a shared machine; and a second Parley process with
 * --cpu-prof takes 3 more uploads, its profile summed by place and function:
 * where an upload's time goes.
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { cql, type Database } from '../../src/db/cassandra/client.js';
import { connectStorage } from '../../src/db/cassandra/connect.js';
import { newTimeUuid } from '../../src/timeuuids.js';
import { signUp, type TestUser } from '../../test/testkit/data/users.js';
import { benchEnv, median } from '../kit/harness.js';
import { PRODUCTION_ENV, remoteApp } from '../kit/remote-parley.js';
import { startServerProcess } from '../kit/servers/server-process.js';
import { startDiscardServer } from '../kit/servers/discard-server.js';
import { cpuUs } from '../kit/profiles/process-cpu.js';
import { cpuProfArgs, profileClockUs, summarizeProfile } from '../kit/profiles/cpu-profile.js';

const FILE_BYTES = 10 * 1024 * 1024;
const CHUNK = 256 * 1024;
const ROUNDS = 7;
const AT_ONCE = 4;
const UPLOAD = 'mutation Upload($file: File!) { uploadAttachment(file: $file) { id size url } }';
const WRITE = cql('INSERT INTO attachment_chunks (id, chunk, data) VALUES (?, ?, ?)', { idempotent: true });
const READ = cql('SELECT data FROM attachment_chunks WHERE id = ? AND chunk >= ? AND chunk <= ?', { idempotent: true });

const mbps = (ms: number) => FILE_BYTES / 1024 / 1024 / (ms / 1000);
const mib = (kb: number) => (kb / 1024).toFixed(1);

/** Resident set and its high-water mark of a process, in kB (/proc/<pid>/status). */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** The upload's multipart body, as a browser's FormData makes it. */
function uploadForm(file: Buffer): FormData {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } }));
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append('0', new Blob([new Uint8Array(file)]), 'big.txt');
  return form;
}

async function upload(url: string, user: TestUser, file: Buffer): Promise<{ url: string; size: number }> {
  const form = uploadForm(file);
  const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${user.token}`, 'x-graphql-yoga-csrf': '1' }, body: form });
  const body = (await res.json()) as { data?: { uploadAttachment: { url: string; size: number } }; errors?: unknown };
  if (!body.data) throw new Error(`upload failed: ${JSON.stringify(body.errors)}`);
  return body.data.uploadAttachment;
}

/** The floor: the file written as Parley's store writes it (40 rows, 4 in flight), and read back 4 rows a request. */
async function floorRound(db: Database, file: Buffer): Promise<{ up: number; down: number }> {
  const id = newTimeUuid(new Date()).toString();
  let t0 = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  for (let c = 0; c * CHUNK < FILE_BYTES; c++) {
    const p = db.execute(WRITE, [id, c, file.subarray(c * CHUNK, (c + 1) * CHUNK)]);
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    if (inFlight.size >= 4) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  const up = performance.now() - t0;
  t0 = performance.now();
  const parts: Buffer[] = [];
  for (let c = 0; c * CHUNK < FILE_BYTES; c += 4) parts.push(...(await db.execute(READ, [id, c, c + 3])).rows.map((r) => r.data as Buffer));
  const down = performance.now() - t0;
  if (!Buffer.concat(parts).equals(file)) throw new Error('the floor read back other bytes');
  return { up, down };
}

/** The server's resident set idle, then at its highest while AT_ONCE uploads run together (sampled every 2 ms). */
async function memoryDuringUploads(pid: number, url: string, users: TestUser[], file: Buffer) {
  const idle = memoryOf(pid);
  let peak = idle.rss;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, memoryOf(pid).rss);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const t0 = performance.now();
  // Two users' (one user may have 3 at once): as many uploads of each.
  await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => upload(url, users[i % users.length]!, file)));
  const ms = performance.now() - t0;
  sampling = false;
  await sampler;
  return { idle, peak, hwm: memoryOf(pid).hwm, ms };
}

/** Where the server's time goes over 3 uploads: a Parley process of its own with --cpu-prof, its samples summed. */
async function profileUploads(user: TestUser, file: Buffer): Promise<string> {
  const server = await startServerProcess({ ...PRODUCTION_ENV, ATTACHMENT_UPLOADS_PER_DAY: '1000' }, cpuProfArgs());
  const from = profileClockUs();
  for (let i = 0; i < 3; i++) await upload(server.url, user, file);
  const to = profileClockUs();
  await server.stop();
  const p = summarizeProfile(server.pid, from, to);
  const ms = (share: number) => ((share * p.sampledMs) / 3).toFixed(1);
  const list = (shares: Array<[string, number]>) => shares.slice(0, 12).map(([k, share]) => `| ${k.replace(/\|/g, '\\|')} | ${ms(share)} |`);
  return [
    `A profile of the server over 3 more uploads (${(p.sampledMs / 3).toFixed(0)} ms of samples per upload, idle included), ms per upload:`,
    '',
    '| by place | ms |',
    '|---|---|',
    ...list(p.byPlace),
    '',
    '| by function (self time) | ms |',
    '|---|---|',
    ...list(p.byFunction),
  ].join('\n');
}

export default async function run(): Promise<string> {
  const server = await startServerProcess({ ...PRODUCTION_ENV, ATTACHMENT_UPLOADS_PER_DAY: '1000' });
  const discard = await startDiscardServer();
  const config = loadConfig({ ...process.env, ...(await benchEnv()) });
  const db = await connectStorage({ ...config.cassandra, migrate: false }, pino({ level: 'warn' }));
  try {
    const user = await signUp(remoteApp(server.url));
    const data = Buffer.concat([Buffer.from('plain text, then random bytes that are not: '), randomBytes(16)]).toString('hex');
    // UTF-8 text (hex digits): sniffed as text, 10 MB of it.
    const file = Buffer.alloc(FILE_BYTES, data);
    // First, on the process as it started: what 4 uploads at once add to it.
    const memory = await memoryDuringUploads(server.pid, server.url, [user, await signUp(remoteApp(server.url))], file);
    const parley = { up: [] as number[], down: [] as number[] };
    const floor = { up: [] as number[], down: [] as number[] };
    const transfer: number[] = [];
    const cpu = { server: [] as number[], client: [] as number[], floor: [] as number[] };
    const serverCpu = () => {
      const { user: u, system } = cpuUs(server.pid);
      return u + system;
    };
    const ownCpu = () => {
      const { user: u, system } = process.cpuUsage();
      return u + system;
    };
    for (let round = 0; round < ROUNDS; round++) {
      // Parley: the upload request, then the download of its link.
      const [server0, own0] = [serverCpu(), ownCpu()];
      let t0 = performance.now();
      const uploaded = await upload(server.url, user, file);
      parley.up.push(performance.now() - t0);
      cpu.server.push(serverCpu() - server0);
      cpu.client.push(ownCpu() - own0);
      t0 = performance.now();
      const got = Buffer.from(await (await fetch(`${server.url}${uploaded.url}`)).arrayBuffer());
      parley.down.push(performance.now() - t0);
      if (!got.equals(file)) throw new Error('the download differs from the upload');
      // The transfer floor: the same body sent to a server that only reads it.
      t0 = performance.now();
      await (await fetch(discard.url, { method: 'POST', body: uploadForm(file) })).text();
      transfer.push(performance.now() - t0);
      const own1 = ownCpu();
      const f = await floorRound(db, file);
      cpu.floor.push(ownCpu() - own1);
      floor.up.push(f.up);
      floor.down.push(f.down);
      console.log(`round ${round + 1}: upload ${parley.up.at(-1)!.toFixed(0)} ms (floor ${f.up.toFixed(0)}, transfer ${transfer.at(-1)!.toFixed(0)}), download ${parley.down.at(-1)!.toFixed(0)} ms (floor ${f.down.toFixed(0)})`);
    }
    const profile = await profileUploads(user, file);
    const row = (what: string, p: number[], f: number[]) =>
      `| ${what} | ${mbps(median(p)).toFixed(1)} | ${mbps(median(f)).toFixed(1)} | ${(median(f) / median(p)).toFixed(2)} | ${median(p).toFixed(0)} | ${median(f).toFixed(0)} |`;
    const ratio = median(floor.up) / median(parley.up);
    return [
      `Parley in a process of its own (compiled, NODE_ENV=production), on the local node. A ${FILE_BYTES / 1024 / 1024} MB file (UTF-8 text),`,
      `${ROUNDS} rounds, each: Parley's upload (multipart over HTTP from this process, the mutation answered) and download`,
      '(GET of its signed link, read whole), then the floor: the driver alone, in this process, writing the same 40 rows of',
      '256 KiB (4 in flight) and reading them back (4 a request). Medians.',
      '',
      '| direction | Parley MB/s | driver alone MB/s | Parley/floor | Parley ms | floor ms |',
      '|---|---|---|---|---|---|',
      row('upload (write)', parley.up, floor.up),
      row('download (read)', parley.down, floor.down),
      '',
      `Goal: upload at 0.8 of the floor or better: ${ratio >= 0.8 ? 'met' : 'missed'} (${ratio.toFixed(2)}).`,
      '',
      'The transfer floor: the same multipart body sent by fetch() to a server of its own that only reads it (bench/kit/servers/discard-server.ts),',
      'in the same rounds. An upload streams its bytes into Cassandra as they arrive, so it can take no less than the slower of',
      'the two floors in its round:',
      '',
      '| | ms (median) | Parley/it |',
      '|---|---|---|',
      `| the transfer alone | ${median(transfer).toFixed(0)} | ${(median(transfer) / median(parley.up)).toFixed(2)} |`,
      `| the slower of transfer and driver, per round | ${median(transfer.map((t, i) => Math.max(t, floor.up[i]!))).toFixed(0)} | ${(median(transfer.map((t, i) => Math.max(t, floor.up[i]!))) / median(parley.up)).toFixed(2)} |`,
      '',
      `The server's memory while ${AT_ONCE} uploads of 10 MB run at once (${memory.ms.toFixed(0)} ms in all), its first uploads since it started, VmRSS sampled every 2 ms:`,
      '',
      '| server process | MiB |',
      '|---|---|',
      `| resident, idle before (started, one sign-up served) | ${mib(memory.idle.rss)} |`,
      `| resident, highest during the uploads | ${mib(memory.peak)} |`,
      `| growth (highest − idle) | ${mib(memory.peak - memory.idle.rss)} |`,
      `| VmHWM (the process's high-water mark) before / after | ${mib(memory.idle.hwm)} / ${mib(memory.hwm)} |`,
      '',
      'CPU per 10 MB file, medians (the upload\'s client is fetch() in this process, sending the multipart body; the floor\'s',
      'CPU includes the driver\'s serialization of the same rows):',
      '',
      '| | ms of CPU |',
      '|---|---|',
      `| Parley's server process, per upload | ${(median(cpu.server) / 1000).toFixed(0)} |`,
      `| the upload's client (this process) | ${(median(cpu.client) / 1000).toFixed(0)} |`,
      `| the floor (this process, the driver writing the 40 rows) | ${(median(cpu.floor) / 1000).toFixed(0)} |`,
      '',
      profile,
    ].join('\n');
  } finally {
    await db.shutdown();
    await server.stop();
    await discard.stop();
  }
}
