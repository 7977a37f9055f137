/**
 * An upload (uploadAttachment, a multipart request) sent with an
 * Idempotency-Key: the same key, name and bytes answer the same Attachment
 * and store one file (counted in CQL); other bytes or another name are
 * IDEMPOTENCY_KEY_REUSED; a refusal made before the file was read whole is not
 * kept, so the key runs again.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { startApp } from '../testkit/app.js';
import { codes } from '../testkit/http.js';
import { cqlRow, cqlRows } from '../testkit/cql.js';
import { signUp, type TestUser } from '../testkit/data/users.js';

let app: App;
beforeAll(async () => {
  app = await startApp();
});

const UPLOAD = 'mutation Upload($file: File!) { uploadAttachment(file: $file) { id filename contentType size } }';

interface Uploaded {
  status: number;
  data?: { uploadAttachment: { id: string; filename: string; contentType: string; size: number } } | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

/** A multipart upload as browsers send it (FormData), with the key in its header. */
async function upload(user: TestUser, bytes: Buffer, filename: string, key: string): Promise<Uploaded> {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } }));
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append('0', new Blob([new Uint8Array(bytes)]), filename);
  const res = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}`, 'x-graphql-yoga-csrf': '1', 'idempotency-key': key },
    body: form,
  });
  return { status: res.status, ...((await res.json()) as object) };
}

const uploadsOf = async (user: TestUser) => (await cqlRows(app, 'SELECT id FROM attachments WHERE owner = ? ALLOW FILTERING', [user.login])).length;
const text = () => Buffer.from(`notes ${randomBytes(16).toString('hex')}\n`.repeat(50));

describe('an upload with an Idempotency-Key', () => {
  it('the same key, name and bytes: the same Attachment again, one file stored', async () => {
    const user = await signUp(app);
    const key = randomUUID();
    const bytes = text();
    const first = await upload(user, bytes, 'notes.txt', key);
    expect(first.errors).toBeUndefined();
    const again = await upload(user, bytes, 'notes.txt', key);
    expect(again).toEqual(first);
    expect(await uploadsOf(user)).toBe(1);
  });

  it('the same key with other bytes or another name: IDEMPOTENCY_KEY_REUSED (422), nothing stored', async () => {
    const user = await signUp(app);
    const key = randomUUID();
    const bytes = text();
    const first = await upload(user, bytes, 'notes.txt', key);
    expect(first.errors).toBeUndefined();
    for (const [other, name] of [
      [text(), 'notes.txt'],
      [bytes, 'other.txt'],
    ] as const) {
      const refused = await upload(user, other, name, key);
      expect(refused.status).toBe(422);
      expect(codes(refused)).toEqual(['IDEMPOTENCY_KEY_REUSED']);
      expect(refused.data ?? null).toBeNull();
    }
    expect(await uploadsOf(user)).toBe(1);
    // The key still answers its first upload.
    expect(await upload(user, bytes, 'notes.txt', key)).toEqual(first);
  });

  it('a refusal made before the file was read whole (its type) is not kept: the same key then uploads', async () => {
    const user = await signUp(app);
    const key = randomUUID();
    const refused = await upload(user, Buffer.concat([Buffer.from([0x00, 0xff, 0xfe]), randomBytes(70_000)]), 'blob.txt', key);
    expect(codes(refused)).toEqual(['BAD_USER_INPUT']);
    const row = await cqlRow(app, 'SELECT attempt, response FROM idempotency_keys WHERE viewer = ? AND key = ?', [user.login, key]);
    expect(row?.attempt).toBeNull();
    expect(row?.response).toBeNull();
    const bytes = text();
    const uploaded = await upload(user, bytes, 'blob.txt', key);
    expect(uploaded.errors).toBeUndefined();
    expect(await upload(user, bytes, 'blob.txt', key)).toEqual(uploaded);
    expect(await uploadsOf(user)).toBe(1);
  });
});
