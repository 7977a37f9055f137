/**
 * Attachments as a client uses them: a multipart upload, a post that attaches
 * it, and the signed link it is served through (Range, ETag), on the real
 * node; and the uploads a hostile client sends.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { projectPath } from '../../src/project-root.js';
import { LeaveRoomDocument } from '../generated/graphql.js';
import { ManualClock, startApp, stopApp } from '../testkit/app.js';
import { dropUnattachedUploads } from '../../src/resolvers/files/cleanup.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { cqlRow, cqlRows } from '../testkit/cql.js';
import { eventually } from '../testkit/poll.js';
import { roomWith } from '../testkit/data/rooms.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';

let app: App;
let alice: TestUser, bob: TestUser, eve: TestUser;
let room: string;
const png = readFileSync(projectPath('examples', 'web-chat', 'screenshot.png'));

beforeAll(async () => {
  app = await startApp({ env: { ATTACHMENT_UPLOADS_PER_DAY: '30' } });
  [alice, bob, eve] = (await signUpMany(app, 3, 'att')) as [TestUser, TestUser, TestUser];
  room = await roomWith(app, alice, [bob]);
});

const UPLOAD = 'mutation Upload($file: File!) { uploadAttachment(file: $file) { id filename contentType size width height } }';
const POST = 'mutation Post($roomName: String!, $content: String!, $attachments: [ID!]) { postMessage(roomName: $roomName, content: $content, attachments: $attachments) { id attachments { id filename contentType size width height url } } }';
const READ = 'query Read($id: ID!) { message(messageId: $id) { attachments { id url } } }';

interface Uploaded {
  status: number;
  data?: { uploadAttachment: { id: string; filename: string; contentType: string; size: number; width: number | null; height: number | null } } | null;
  errors?: Array<{ extensions?: Record<string, unknown> }>;
}

/** A multipart upload as browsers send it (FormData), with the preflight header unless told otherwise. */
async function upload(user: TestUser, bytes: Buffer, filename: string, claimedType = 'application/octet-stream', headers: Record<string, string> = { 'x-graphql-yoga-csrf': '1' }): Promise<Uploaded> {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } }));
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append('0', new Blob([new Uint8Array(bytes)], { type: claimedType }), filename);
  const res = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${user.token}`, ...headers }, body: form });
  return { status: res.status, ...((await res.json()) as object) };
}

const get = (url: string, headers: Record<string, string> = {}) => fetch(`${app.url}${url}`, { headers });
const code = (r: { errors?: Array<{ extensions?: Record<string, unknown> }> }) => r.errors?.[0]?.extensions;

describe('attachments', () => {
  it('uploads an image, attaches it to a post, and serves it to participants by signed link, with Range and ETag', async () => {
    const uploaded = await upload(alice, png, 'C:\\Users\\alice\\Pictures\\screen shot.png', 'text/plain');
    // The type is the bytes', not the claim; the name loses its path; the size and dimensions are read.
    expect(uploaded.data!.uploadAttachment).toMatchObject({ filename: 'screen shot.png', contentType: 'image/png', size: png.byteLength, width: 1100, height: 760 });
    const id = uploaded.data!.uploadAttachment.id;
    const posted = (await gql(app, POST, { roomName: room, content: 'look', attachments: [id] }, alice.token)) as { data: { postMessage: { id: string } } };
    const link = ((await gqlOk(app, READ as never, { id: posted.data.postMessage.id } as never, bob.token)) as { message: { attachments: Array<{ url: string }> } }).message.attachments[0]!.url;

    const whole = await get(link);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('image/png');
    expect(whole.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await whole.arrayBuffer()).equals(png)).toBe(true);
    const etag = whole.headers.get('etag')!;
    expect((await get(link, { 'if-none-match': etag })).status).toBe(304);

    const part = await get(link, { range: 'bytes=100-299' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-299/${png.byteLength}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(png.subarray(100, 300))).toBe(true);
    const tail = await get(link, { range: 'bytes=-10' });
    expect(Buffer.from(await tail.arrayBuffer()).equals(png.subarray(-10))).toBe(true);
    expect((await get(link, { range: `bytes=${png.byteLength}-` })).status).toBe(416);

    // A link is its user's while they may see the message: tampered, for another file, or after they left, it is a 404.
    expect((await get(link.replace(/token=.{10}/, 'token=xxxxxxxxxx'))).status).toBe(404);
    expect((await get('/attachments/%E0%A4%A?token=x')).status).toBe(404);
    expect((await get(link.replace(id, id.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))))).status).toBe(404);
    await gqlOk(app, LeaveRoomDocument, { roomName: room }, bob.token);
    expect((await get(link)).status).toBe(404);
    expect(codes(await gql(app, READ, { id: posted.data.postMessage.id }, eve.token))).toEqual(['FORBIDDEN']);
  });

  it('attaches an upload to one message only, by its uploader only, at most 10 a message', async () => {
    const r = await roomWith(app, alice, [eve]);
    const text = (await upload(alice, Buffer.from('notes'), 'notes.txt')).data!.uploadAttachment;
    expect(text.contentType).toBe('text/plain; charset=utf-8');
    expect(code(await gql(app, POST, { roomName: r, content: 'mine?', attachments: [text.id] }, eve.token))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'attachments' });
    expect((await gql(app, POST, { roomName: r, content: 'first', attachments: [text.id] }, alice.token)).errors).toBeUndefined();
    expect(code(await gql(app, POST, { roomName: r, content: 'again', attachments: [text.id] }, alice.token))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'attachments' });
    // One already attached among them: refused before the other is attached, which stays free for a later post.
    const fresh = (await upload(alice, Buffer.from('fresh'), 'fresh.txt')).data!.uploadAttachment;
    expect(code(await gql(app, POST, { roomName: r, content: 'both', attachments: [fresh.id, text.id] }, alice.token))).toMatchObject({ field: 'attachments' });
    expect((await gql(app, POST, { roomName: r, content: 'fresh alone', attachments: [fresh.id] }, alice.token)).errors).toBeUndefined();
    const eleven = Array.from({ length: 11 }, () => text.id);
    expect(code(await gql(app, POST, { roomName: r, content: 'many', attachments: eleven }, alice.token))).toMatchObject({ code: 'LIMIT_REACHED', limit: 'ATTACHMENTS_PER_MESSAGE' });
  });

  it('drops the files with their message', async () => {
    const up = (await upload(alice, Buffer.from('%PDF-1.4\n...'), 'doc.pdf')).data!.uploadAttachment;
    const posted = (await gql(app, POST, { roomName: room, content: 'doc', attachments: [up.id] }, alice.token)) as {
      data: { postMessage: { id: string; attachments: Array<{ url: string; contentType: string }> } };
    };
    const { url, contentType } = posted.data.postMessage.attachments[0]!;
    expect(contentType).toBe('application/pdf');
    const served = await get(url);
    expect(served.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''doc.pdf");
    await gql(app, 'mutation($id: ID!) { deleteMessage(messageId: $id) { id } }', { id: posted.data.postMessage.id }, alice.token);
    expect((await get(url)).status).toBe(404);
    expect(Number((await cqlRow(app, 'SELECT COUNT(*) AS n FROM attachment_chunks WHERE id = ?', [up.id]))?.n)).toBe(0);
  });
});

describe('forwarded attachments', () => {
  it("show the original's files through the copy to its room, and go when the original is deleted", async () => {
    const [carol] = await signUpMany(app, 1, 'attfwd');
    const from = await roomWith(app, alice, []);
    const to = await roomWith(app, alice, [carol!]);
    const up = (await upload(alice, png, 'shot.png')).data!.uploadAttachment;
    const original = (await gql(app, POST, { roomName: from, content: 'shot', attachments: [up.id] }, alice.token)) as { data: { postMessage: { id: string } } };
    const forwarded = await gql(app, 'mutation($id: ID!, $to: String!) { forwardMessage(messageId: $id, toRoom: $to) { ... on Message { id } } }', { id: original.data.postMessage.id, to }, alice.token);
    const copyId = (forwarded.data as { forwardMessage: { id: string } }).forwardMessage.id;
    // carol is not in the original's room: she sees the file through the copy, in hers.
    const link = ((await gqlOk(app, READ as never, { id: copyId } as never, carol!.token)) as { message: { attachments: Array<{ url: string }> } }).message.attachments[0]!.url;
    const served = await get(link);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
    // Deleting a copy keeps the original's file; deleting the original takes it from every copy.
    const del = (id: string) => gql(app, 'mutation($id: ID!) { deleteMessage(messageId: $id) { id deleted attachments { id } } }', { id }, alice.token);
    const second = await gql(app, 'mutation($id: ID!, $to: String!) { forwardMessage(messageId: $id, toRoom: $to) { ... on Message { id } } }', { id: original.data.postMessage.id, to }, alice.token);
    const secondId = (second.data as { forwardMessage: { id: string } }).forwardMessage.id;
    // The copy is deleted (its tombstone answered, showing no file, as its room reads it), and the file stays, bytes and all.
    const deletedCopy = await del(secondId);
    expect(deletedCopy.errors).toBeUndefined();
    expect(deletedCopy.data).toEqual({ deleteMessage: { id: secondId, deleted: true, attachments: [] } });
    const asRead = await gql(app, 'query($id: ID!) { message(messageId: $id) { deleted attachments { id } } }', { id: secondId }, carol!.token);
    expect(asRead.data).toEqual({ message: { deleted: true, attachments: [] } });
    expect((await get(link)).status).toBe(200);
    expect(Number((await cqlRow(app, 'SELECT COUNT(*) AS n FROM attachment_chunks WHERE id = ?', [up.id]))?.n)).toBeGreaterThan(0);
    await del(original.data.postMessage.id);
    expect((await get(link)).status).toBe(404);
  });
});

describe('hostile uploads', () => {
  it('names a file by the type its bytes showed, without direction tricks, and refuses uploads without a session', async () => {
    expect((await upload(alice, Buffer.from('alert(1)'), 'invoice.js')).data!.uploadAttachment.filename).toBe('invoice.js.txt');
    expect((await upload(alice, Buffer.from('x'), 'photo\u202Etxt.exe')).data!.uploadAttachment.filename).toBe('phototxt.exe.txt');
    expect((await upload(alice, png, 'holiday.PNG')).data!.uploadAttachment.filename).toBe('holiday.PNG');
    const anonymous = await upload({ ...alice, token: 'not-a-token' }, Buffer.from('x'), 'x.txt');
    expect(code(anonymous)).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('refuses bytes off the allowlist whatever they claim, and files over 10 MB', async () => {
    const exe = await upload(alice, Buffer.concat([Buffer.from('MZ'), randomBytes(4000)]), 'cat.png', 'image/png');
    expect(code(exe)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'file' });
    // Text its type allows: refused for its size alone, once past 10 MB as it streams in.
    const big = await upload(alice, Buffer.alloc(10 * 1024 * 1024 + 1, 'a'), 'big.txt');
    expect(big.status).toBe(413);
    expect(code(big)).toMatchObject({ code: 'REQUEST_ENTITY_TOO_LARGE' });
  });

  it('refuses a body of 1,000 parts, a form posted from another site, and a cut-off body, leaving nothing', async () => {
    const listedToday = async () =>
      (await cqlRows(app, 'SELECT id FROM unattached_uploads WHERE day = ?', [Number(new Date().toISOString().slice(0, 10).replace(/-/g, ''))])).map((r) => String(r.id));
    const before = await listedToday();
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } }));
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    for (let i = 0; i < 1000; i++) form.append(String(i), new Blob(['x']), `f${i}.txt`);
    const parts = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}`, 'x-graphql-yoga-csrf': '1' }, body: form });
    expect(parts.status).toBe(400);
    expect(((await parts.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe('BAD_REQUEST');

    // What a page on another site can send: a form post, with cookies perhaps, but no header of its own.
    const csrf = await upload(alice, Buffer.from('hello'), 'x.txt', 'text/plain', { origin: 'https://evil.example' });
    expect(csrf.status).toBe(400);

    // A body announced at 2 MB that stops after 64 KB: the server answers or closes, and stores nothing.
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${app.url}/graphql`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${alice.token}`,
          'x-graphql-yoga-csrf': '1',
          'content-type': 'multipart/form-data; boundary=cut',
          'content-length': String(2 * 1024 * 1024),
        },
      });
      req.on('response', (res) => res.resume().on('end', resolve));
      req.on('error', () => resolve());
      req.write(`--cut\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify({ query: UPLOAD, variables: { file: null } })}\r\n`);
      req.write(`--cut\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.file"]}\r\n--cut\r\nContent-Disposition: form-data; name="0"; filename="a.txt"\r\n\r\n`);
      req.write(Buffer.alloc(64 * 1024, 'a'));
      req.destroy();
    });
    // Listed perhaps (its head may have come in whole), but never readable, and its bytes go.
    for (const id of (await listedToday()).filter((id) => !before.includes(id))) {
      expect(await cqlRow(app, 'SELECT id FROM attachments WHERE id = ?', [id])).toBeUndefined();
      await eventually(async () => Number((await cqlRow(app, 'SELECT COUNT(*) AS n FROM attachment_chunks WHERE id = ?', [id]))?.n) === 0, { what: 'its chunks dropped' });
    }
    // And the server goes on serving.
    expect((await upload(alice, Buffer.from('still here'), 'ok.txt')).data?.uploadAttachment.contentType).toBe('text/plain; charset=utf-8');
  });

  it('refuses uploads past the day\'s count with LIMIT_REACHED', async () => {
    const [frank] = await signUpMany(app, 1, 'attday');
    const results = [];
    for (let i = 0; i < 31; i++) results.push(await upload(frank!, Buffer.from(`file ${i}`), `f${i}.txt`));
    expect(results.slice(0, 30).every((r) => r.data?.uploadAttachment)).toBe(true);
    expect(code(results[30]!)).toMatchObject({ code: 'LIMIT_REACHED', limit: 'UPLOADS_PER_DAY', max: 30 });
  });
});

describe('the cleanup of unattached uploads', () => {
  it('drops an upload never attached once a day has passed, and keeps one a message has', async () => {
    const clock = new ManualClock();
    const clocked = await startApp({ clock });
    try {
      const [owner] = await signUpMany(clocked, 1, 'attclean');
      const r = await roomWith(clocked, owner!);
      const send = async (name: string) => {
        const form = new FormData();
        form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } }));
        form.append('map', JSON.stringify({ 0: ['variables.file'] }));
        form.append('0', new Blob([name]), name);
        const res = await fetch(`${clocked.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${owner!.token}`, 'x-graphql-yoga-csrf': '1' }, body: form });
        return ((await res.json()) as { data: { uploadAttachment: { id: string } } }).data.uploadAttachment.id;
      };
      const [kept, left] = [await send('kept.txt'), await send('left.txt')];
      await gqlOk(clocked, POST as never, { roomName: r, content: 'with a file', attachments: [kept] } as never, owner!.token);
      // Within the day, nothing goes: the uploader may still attach it. (Other tests' uploads share the keyspace.)
      await dropUnattachedUploads(clocked.services);
      expect((await clocked.services.stores.attachments.byIds([kept, left])).map((a) => a.id).sort()).toEqual([kept, left].sort());
      clock.advance(25 * 3_600_000);
      expect(await dropUnattachedUploads(clocked.services)).toBeGreaterThanOrEqual(1);
      expect((await clocked.services.stores.attachments.byIds([kept, left])).map((a) => a.id)).toEqual([kept]);
      const chunks = async (id: string) => Number((await cqlRow(clocked, 'SELECT COUNT(*) AS n FROM attachment_chunks WHERE id = ?', [id]))?.n);
      expect([await chunks(kept), await chunks(left)]).toEqual([1, 0]);
      // Attaching it now is refused: it is gone.
      expect(code(await gql(clocked, POST, { roomName: r, content: 'late', attachments: [left] }, owner!.token))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'attachments' });
    } finally {
      await stopApp(clocked);
    }
  });
});
