/**
 * Uploads under attack, over raw HTTP against a running app: bodies framed
 * with Transfer-Encoding: chunked, refusals in the middle of a body on a
 * kept-alive connection, sessions refused before the body is read, one user
 * holding every upload slot, stalled bodies, control and format characters in
 * file names, and uploads cut off after some of their chunks were stored.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { projectPath } from '../../src/project-root.js';
import { LogoutDocument } from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { cqlRow, cqlRows } from '../testkit/cql.js';
import { gql, gqlOk } from '../testkit/http.js';
import { roomWith } from '../testkit/data/rooms.js';
import { eventually, withDeadline } from '../testkit/poll.js';
import { signUp, signUpMany, type TestUser } from '../testkit/data/users.js';

let app: App;
let alice: TestUser, bob: TestUser;
const png = readFileSync(projectPath('examples', 'web-chat', 'screenshot.png'));
const MB = 1024 * 1024;

beforeAll(async () => {
  app = await startApp({ env: { ATTACHMENT_UPLOADS_PER_DAY: '100' } });
  [alice, bob] = (await signUpMany(app, 2, 'atk')) as [TestUser, TestUser];
});

const UPLOAD = 'mutation Upload($file: File!) { uploadAttachment(file: $file) { id filename contentType size } }';
const POST = 'mutation Post($roomName: String!, $content: String!, $attachments: [ID!]) { postMessage(roomName: $roomName, content: $content, attachments: $attachments) { id attachments { url } } }';
const BOUNDARY = 'parley-test-boundary';

/** One part of a multipart body (a file when `filename` is given). */
function part(name: string, value: string | Buffer, filename?: string): Buffer {
  const disposition = `form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}`;
  const head = `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${filename === undefined ? '' : 'Content-Type: application/octet-stream\r\n'}\r\n`;
  return Buffer.concat([Buffer.from(head), Buffer.isBuffer(value) ? value : Buffer.from(value), Buffer.from('\r\n')]);
}
const operationsAndMap = (map: Record<string, string[]> = { 0: ['variables.file'] }) =>
  Buffer.concat([part('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } })), part('map', JSON.stringify(map))]);
/** The head of a file part: its bytes follow. */
const fileHead = (name = '0', filename = 'a.txt') =>
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n`);
const closing = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: { data?: { uploadAttachment?: { id: string; filename: string } | null } | null; errors?: Array<{ extensions?: Record<string, unknown> }> } | null;
}

interface RawUpload {
  /** Settles with the answer, or with null when the connection closed without one. */
  answer: Promise<Answer | null>;
  /** Bytes of the body handed to the socket by the time the answer (or the close) came. */
  written(): number;
  abort(): void;
}

/**
 * A multipart POST over its own connection (or `agent`'s): `body` is written as it is given, waiting for the socket
 * to take each piece (the server's backpressure); `contentLength` declared, else Transfer-Encoding: chunked.
 * `hold`: leave the body unfinished.
 */
function rawUpload(opts: { token: string; body: Iterable<Buffer>; contentLength?: number; agent?: Agent; hold?: boolean }, target: App = app): RawUpload {
  let written = 0;
  let settled = false;
  const headers: Record<string, string> = {
    authorization: `Bearer ${opts.token}`,
    'x-graphql-yoga-csrf': '1',
    'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
    ...(opts.contentLength === undefined ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(opts.contentLength) }),
  };
  const req = httpRequest(`${target.url}/graphql`, { method: 'POST', headers, agent: opts.agent ?? false });
  const answer = new Promise<Answer | null>((resolve) => {
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        settled = true;
        const text = Buffer.concat(parts).toString();
        let body: Answer['body'] = null;
        try {
          body = JSON.parse(text) as Answer['body'];
        } catch {
          body = null;
        }
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
      res.on('error', () => resolve(null));
    });
    req.on('error', () => {
      settled = true;
      resolve(null);
    });
    req.on('close', () => {
      if (!settled) resolve(null);
    });
  });
  void (async () => {
    for (const piece of opts.body) {
      if (settled || req.destroyed) return;
      written += piece.byteLength;
      if (!req.write(piece)) {
        await new Promise<void>((resolve) => {
          const done = () => resolve();
          req.once('drain', done);
          req.once('close', done);
          void answer.then(done);
        });
      }
    }
    if (!opts.hold && !settled && !req.destroyed) req.end();
  })();
  return { answer, written: () => written, abort: () => req.destroy() };
}

/** `count` pieces of `size` bytes. */
function* filler(count: number, size = MB, byte = 'a'): Iterable<Buffer> {
  const piece = Buffer.alloc(size, byte);
  for (let i = 0; i < count; i++) yield piece;
}

const codeOf = (a: Answer | null) => a?.body?.errors?.[0]?.extensions;

describe('one body limit however the body is framed', () => {
  it('refuses a chunked upload with 12 MB after its closing boundary, storing nothing', async () => {
    const listed = await listedToday();
    const up = rawUpload({ token: alice.token, body: [operationsAndMap(), fileHead(), Buffer.from('small file'), closing, ...filler(12)] });
    const answer = await withDeadline(up.answer, 30_000, 'an answer to the upload');
    // A closed connection is a refusal too; an answer must be the 413.
    if (answer) {
      expect(answer.status).toBe(413);
      expect(codeOf(answer)).toMatchObject({ code: 'REQUEST_ENTITY_TOO_LARGE' });
    }
    await expectNothingReadable(listed);
  });

  it('stops reading a chunked body of 300 MB at the limit', async () => {
    const up = rawUpload({ token: alice.token, body: [operationsAndMap(), fileHead(), Buffer.from('small file'), closing, ...filler(300)] });
    const answer = await withDeadline(up.answer, 30_000, 'an answer to the upload');
    if (answer) expect(answer.status).toBe(413);
    // What the server read, plus what the sockets' buffers took: far below what was offered.
    expect(up.written()).toBeLessThan(40 * MB);
  });
});

describe('a refusal in the middle of a body', () => {
  it('leaves a kept-alive connection usable, or closes it: the next request is answered', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const end = Buffer.from(`--${BOUNDARY}--\r\n`);
    // The same agent (one socket at most): after each refusal, its next request must not meet a stalled connection.
    const next = () =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${app.url}/graphql`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume().on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ query: '{ __typename }' }));
      });
    const refusedThenNext = async (body: Buffer) => {
      const refused = await withDeadline(rawUpload({ token: alice.token, body: [body], contentLength: body.byteLength, agent }).answer, 10_000, 'the refusal');
      expect(await withDeadline(next(), 10_000, 'an answer on the kept-alive connection')).toBe(200);
      return refused;
    };
    try {
      // Two files of 150 KB where the map names one: refused once the second begins.
      const twoFiles = await refusedThenNext(Buffer.concat([operationsAndMap(), part('0', Buffer.alloc(150 * 1024, 'a'), 'a.txt'), part('1', Buffer.alloc(150 * 1024, 'b'), 'b.txt'), end]));
      expect(twoFiles?.status).toBe(400);
      expect(codeOf(twoFiles)).toMatchObject({ code: 'BAD_REQUEST' });
      // A map naming two files: refused as soon as the map is read, 2 MB of files still to come.
      const twoMapped = await refusedThenNext(
        Buffer.concat([operationsAndMap({ 0: ['variables.file'], 1: ['variables.file'] }), part('0', Buffer.alloc(MB, 'a'), 'a.txt'), part('1', Buffer.alloc(MB, 'b'), 'b.txt'), end]),
      );
      expect(codeOf(twoMapped)).toMatchObject({ code: 'BAD_REQUEST' });
      // An executable claiming PNG: refused by its first bytes, 2 MB of it still to come.
      const exe = await refusedThenNext(Buffer.concat([operationsAndMap(), part('0', Buffer.concat([Buffer.from('MZ'), Buffer.alloc(2 * MB, 0x90)]), 'cat.png'), end]));
      expect(codeOf(exe)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'file' });
    } finally {
      agent.destroy();
    }
  });
});

describe('the session of an upload', () => {
  it('is checked as for every request, revocation and reason included, before the body is read', async () => {
    const carol = await signUp(app);
    await gqlOk(app, LogoutDocument, {}, carol.token);
    // Announced at 1 MB, sent 1 KB: an answer can only come from a check made before the body.
    const revoked = rawUpload({ token: carol.token, body: [operationsAndMap(), fileHead(), Buffer.alloc(1024, 'a')], contentLength: MB, hold: true });
    const answer = await withDeadline(revoked.answer, 10_000, 'the refusal of a revoked token before its body');
    revoked.abort();
    expect(codeOf(answer)).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'TOKEN_REVOKED' });
    const invalid = rawUpload({ token: 'not-a-token', body: [operationsAndMap(), fileHead(), Buffer.alloc(1024, 'a')], contentLength: MB, hold: true });
    const refused = await withDeadline(invalid.answer, 10_000, 'the refusal of an invalid token before its body');
    invalid.abort();
    expect(codeOf(refused)).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'TOKEN_INVALID' });
  });
});

describe('upload slots', () => {
  it("caps one user's uploads at once (RATE_LIMITED, UPLOADS_AT_ONCE), leaving the others' alone", async () => {
    const [mallory] = await signUpMany(app, 1, 'atkcap');
    // Each sends 400 bytes of a declared 9 MB, then stalls.
    const stalled = Array.from({ length: 4 }, () =>
      rawUpload({ token: mallory!.token, body: [operationsAndMap(), fileHead(), Buffer.alloc(400, 'a')], contentLength: 9 * MB, hold: true }),
    );
    try {
      const answered: Array<Answer | null> = [];
      stalled.forEach((s) => void s.answer.then((a) => answered.push(a)));
      // One of the four is past the cap; the other three hold their slots.
      await eventually(() => answered.length >= 1, { what: 'the upload past the cap refused' });
      expect(answered[0]?.status).toBe(429);
      expect(codeOf(answered[0]!)).toMatchObject({ code: 'RATE_LIMITED', reason: 'UPLOADS_AT_ONCE', retryAfter: 1 });
      // Another user uploads meanwhile.
      const theirs = await upload(bob, Buffer.from('mine goes through'), 'b.txt');
      expect(theirs.data?.uploadAttachment).toMatchObject({ filename: 'b.txt' });
      expect(answered).toHaveLength(1);
      // A browser's upload past the cap, 10 MB still on its way when refused, reads the refusal (not a closed connection).
      const past = await upload(mallory!, Buffer.alloc(10 * MB, 'm'), 'ten.txt');
      expect(past.status).toBe(429);
      expect(past.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'UPLOADS_AT_ONCE' });
    } finally {
      stalled.forEach((s) => s.abort());
    }
    // Cut off, they free their slots: the user uploads again.
    await eventually(async () => (await upload(mallory!, Buffer.from('again'), 'again.txt')).data?.uploadAttachment, { what: 'slots freed' });
  });

  it('answers a stalled upload with REQUEST_TIMEOUT (or closes it) and frees its slot', async () => {
    // A short window for the minimum rate, so the test need not wait out the default one.
    const quick = await startApp({ env: { UPLOAD_RATE_WINDOW_MS: '300' } });
    const [slow] = await signUpMany(quick, 1, 'atkslow');
    const stalls = Array.from({ length: 3 }, () =>
      rawUpload({ token: slow!.token, body: [operationsAndMap(), fileHead(), Buffer.alloc(400, 'a')], contentLength: 9 * MB, hold: true }, quick),
    );
    const answers = await withDeadline(Promise.all(stalls.map((s) => s.answer)), 15_000, 'the stalled uploads answered or closed');
    for (const answer of answers) {
      if (!answer) continue;
      expect(answer.status).toBe(408);
      expect(codeOf(answer)).toMatchObject({ code: 'REQUEST_TIMEOUT' });
    }
    const again = await uploadTo(quick, slow!, Buffer.from('on time'), 'ok.txt');
    expect(again.data?.uploadAttachment).toMatchObject({ filename: 'ok.txt' });
  });
});

describe('file names', () => {
  it('lose every control and format character, and are served without them', async () => {
    const c1 = await upload(alice, png, 'report\u0085\u009bname.png');
    expect(c1.data?.uploadAttachment?.filename).toBe('reportname.png');
    const alm = await upload(alice, png, 'pic\u061Cgnp.exe');
    expect(alm.data?.uploadAttachment?.filename).toBe('picgnp.exe.png');
    const format = await upload(alice, Buffer.from('x'), 'a\u200Bb\u2066c\u2069d\uFEFF\u00ADe\u007F\u0001.txt');
    expect(format.data?.uploadAttachment?.filename).toBe('abcde.txt');
    // As served: Content-Disposition names the cleaned file.
    const link = await urlOf(alm.data!.uploadAttachment!.id, alice);
    const served = await fetch(`${app.url}${link}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-disposition')).toBe("inline; filename*=UTF-8''picgnp.exe.png");
  });
});

describe('a cut-off upload', () => {
  it('leaves no readable file and no chunk, even after some of its chunks were stored', async () => {
    const listed = await listedToday();
    // 3 MB of a declared 9 MB: a dozen chunks stored by then, then the connection goes.
    const cut = rawUpload({ token: alice.token, body: [operationsAndMap(), fileHead(), ...filler(3)], contentLength: 9 * MB, hold: true });
    await eventually(async () => (await listedToday()).length > listed.length, { what: 'the upload listed' });
    await eventually(() => cut.written() >= 3 * MB, { what: 'the 3 MB written' });
    cut.abort();
    await expectNothingReadable(listed);
    expect((await upload(alice, Buffer.from('still here'), 'ok.txt')).data?.uploadAttachment).toBeTruthy();
  });
});

async function uploadTo(target: App, user: TestUser, bytes: Buffer, filename: string) {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } }));
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append('0', new Blob([new Uint8Array(bytes)]), filename);
  const res = await fetch(`${target.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${user.token}`, 'x-graphql-yoga-csrf': '1' }, body: form });
  return { status: res.status, ...((await res.json()) as Answer['body'] & object) };
}
const upload = (user: TestUser, bytes: Buffer, filename: string) => uploadTo(app, user, bytes, filename);

/** The link through which `user` fetches upload `id` once it is posted in a room of theirs. */
async function urlOf(id: string, user: TestUser): Promise<string> {
  const room = await roomWith(app, user);
  const posted = await gql(app, POST, { roomName: room, content: 'file', attachments: [id] }, user.token);
  return (posted.data as { postMessage: { attachments: Array<{ url: string }> } }).postMessage.attachments[0]!.url;
}

const today = () => Number(new Date().toISOString().slice(0, 10).replace(/-/g, ''));
async function listedToday(): Promise<string[]> {
  return (await cqlRows(app, 'SELECT id FROM unattached_uploads WHERE day = ?', [today()])).map((r) => String(r.id));
}

/** Every upload listed since `before`: no row (nothing readable), and, once its cleanup ran, no chunk. */
async function expectNothingReadable(before: string[]): Promise<void> {
  const fresh = (await listedToday()).filter((id) => !before.includes(id));
  for (const id of fresh) {
    expect(await cqlRow(app, 'SELECT id FROM attachments WHERE id = ?', [id])).toBeUndefined();
    await eventually(async () => Number((await cqlRow(app, 'SELECT COUNT(*) AS n FROM attachment_chunks WHERE id = ?', [id]))?.n) === 0, { what: `the chunks of ${id} dropped` });
  }
}
