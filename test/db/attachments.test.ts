/**
 * Attachment storage on the real node: a file's bytes in 256 KiB chunk rows,
 * read back whole and by range, refused past its size limit and dropped when
 * an upload is cut off; and its row, attached to one message only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { CHUNK_BYTES, FileTooLarge, type FileBytes } from '../../src/db/files/file-bytes.js';
import type { AttachmentStore } from '../../src/db/files/attachments.js';
import { newTimeUuid } from '../../src/timeuuids.js';
import { startApp } from '../testkit/app.js';
import { cqlRow } from '../testkit/cql.js';

let app: App;
let bytes: FileBytes;
let attachments: AttachmentStore;

beforeAll(async () => {
  app = await startApp();
  ({ fileBytes: bytes, attachments } = app.services.stores);
});

/** `data` as an upload arrives: in parts of uneven sizes, none aligned with the chunks. */
async function* parts(data: Buffer, size = 64 * 1024 + 17): AsyncIterable<Uint8Array> {
  for (let at = 0; at < data.byteLength; at += size) yield data.subarray(at, at + size);
}

async function readAll(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const part of source) out.push(part);
  return Buffer.concat(out);
}

const chunkCount = async (id: string) => Number((await cqlRow(app, 'SELECT COUNT(*) AS n FROM attachment_chunks WHERE id = ?', [id]))?.n);

describe('file bytes in Cassandra', () => {
  it('stores 10 MB in 256 KiB rows and reads it back whole and by any range', async () => {
    const id = newTimeUuid(new Date()).toString();
    const data = randomBytes(10 * 1024 * 1024);
    const stored = await bytes.write(id, parts(data), 10 * 1024 * 1024);
    expect(stored).toEqual({ size: data.byteLength, sha256: createHash('sha256').update(data).digest('hex'), chunkBytes: CHUNK_BYTES });
    expect(await chunkCount(id)).toBe(40);
    expect((await readAll(bytes.read(id, stored))).equals(data)).toBe(true);
    for (const [start, end] of [[0, 0], [CHUNK_BYTES - 3, CHUNK_BYTES + 2], [5 * CHUNK_BYTES, 9 * CHUNK_BYTES - 1], [data.byteLength - 10, data.byteLength - 1]] as const) {
      expect((await readAll(bytes.read(id, stored, { start, end }))).equals(data.subarray(start, end + 1)), `${start}-${end}`).toBe(true);
    }
  });

  it('refuses a file past its limit, and an upload cut off leaves no bytes behind', async () => {
    const big = newTimeUuid(new Date()).toString();
    await expect(bytes.write(big, parts(randomBytes(CHUNK_BYTES * 3)), CHUNK_BYTES * 2)).rejects.toBeInstanceOf(FileTooLarge);
    expect(await chunkCount(big)).toBe(0);

    const cut = newTimeUuid(new Date()).toString();
    async function* interrupted(): AsyncIterable<Uint8Array> {
      yield randomBytes(CHUNK_BYTES * 2);
      throw new Error('the client went away');
    }
    await expect(bytes.write(cut, interrupted(), 10 * 1024 * 1024)).rejects.toThrow('the client went away');
    expect(await chunkCount(cut)).toBe(0);
    expect(await attachments.byIds([cut])).toEqual([]);
  });

  it('stores an empty file as one empty row', async () => {
    const id = newTimeUuid(new Date()).toString();
    const stored = await bytes.write(id, parts(Buffer.alloc(0)), 1024);
    expect(stored.size).toBe(0);
    expect((await readAll(bytes.read(id, stored))).byteLength).toBe(0);
  });
});

describe('attachment rows', () => {
  it('attach one upload to one message, by its owner only, whatever races', async () => {
    const id = newTimeUuid(new Date()).toString();
    await attachments.insert({ id, owner: 'ada', filename: 'a.png', contentType: 'image/png', size: 3, sha256: 'x', chunkBytes: CHUNK_BYTES, width: 1, height: 1 });
    expect(await attachments.attach(id, 'eve', 'room-a', newTimeUuid(new Date()).toString())).toBe(false);
    const messages = Array.from({ length: 8 }, () => newTimeUuid(new Date()).toString());
    const outcomes = await Promise.all(messages.map((m) => attachments.attach(id, 'ada', 'room-a', m)));
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    const [row] = await attachments.byIds([id]);
    expect(row!.messageId).toBe(messages[outcomes.indexOf(true)]);
    // Asking again for the message it went to answers true: a retried post finds its own attachment.
    expect(await attachments.attach(id, 'ada', 'room-a', row!.messageId!)).toBe(true);
  });
});

describe('a chunk write that fails', () => {
  it('fails the whole write and leaves no chunk, even when later writes succeed', async () => {
    const id = newTimeUuid(new Date()).toString();
    const execute = app.services.db.execute.bind(app.services.db);
    let writes = 0;
    const failing = Object.assign(Object.create(Object.getPrototypeOf(app.services.db)), app.services.db, {
      execute: (stmt: { cql: string }, params: unknown[], opts?: unknown) =>
        stmt.cql.startsWith('INSERT INTO attachment_chunks') && ++writes === 2 ? Promise.reject(new Error('a replica timed out')) : execute(stmt as never, params, opts as never),
    });
    const { CassandraFileBytes } = await import('../../src/db/files/file-bytes.js');
    await expect(new CassandraFileBytes(failing).write(id, parts(randomBytes(CHUNK_BYTES * 6)), 10 * 1024 * 1024)).rejects.toThrow('a replica timed out');
    expect(await chunkCount(id)).toBe(0);
  });
});
