/**
 * Where a file's bytes live: the FileBytes interface, so that an object store
 * can replace the default, and CassandraFileBytes, which keeps them in
 * attachment_chunks (256 KiB a row, one partition per file).
 */
import { createHash } from 'node:crypto';
import { cql, type Database } from '../cassandra/client.js';

/** Bytes per chunk row: small enough for any mutation and read, few enough rows for a 10 MB file (40). */
export const CHUNK_BYTES = 256 * 1024;
/** Chunk writes in flight at once per file (the bench's floor writes as many). */
const WRITES_IN_FLIGHT = 4;

export interface StoredBytes {
  size: number;
  /** Hex SHA-256 of the whole file. */
  sha256: string;
  chunkBytes: number;
}

/** A byte range of a file, both ends included (HTTP Range's). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface FileBytes {
  /**
   * Stores the bytes `source` yields under `id`, refusing past `maxBytes`
   * (what was written by then is dropped). Bytes written are not a file yet:
   * the file's row, written after, is what makes them readable.
   */
  write(id: string, source: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StoredBytes>;
  /** The bytes of `range` (all of them without one), in order. */
  read(id: string, stored: StoredBytes, range?: ByteRange): AsyncIterable<Buffer>;
  drop(id: string): Promise<void>;
}

export class FileTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`The file is larger than ${maxBytes} bytes`);
  }
}

const WRITE_CHUNK = cql('INSERT INTO attachment_chunks (id, chunk, data) VALUES (?, ?, ?)', { idempotent: true });
const READ_CHUNKS = cql('SELECT chunk, data FROM attachment_chunks WHERE id = ? AND chunk >= ? AND chunk <= ?', { idempotent: true });
const DROP_CHUNKS = cql('DELETE FROM attachment_chunks WHERE id = ?', { idempotent: true });

export class CassandraFileBytes implements FileBytes {
  constructor(
    private readonly db: Database,
    private readonly chunkBytes = CHUNK_BYTES,
  ) {}

  /**
   * Each chunk is gathered (copied once, into a buffer of its own) while the earlier ones are written, and sent as
   * soon as one of the WRITES_IN_FLIGHT is done: `source` is read at the pace Cassandra takes the chunks, one chunk
   * ahead. A chunk's buffer is filled again once its write is done: a file holds WRITES_IN_FLIGHT + 1 of them.
   */
  async write(id: string, source: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StoredBytes> {
    const hash = createHash('sha256');
    const inFlight = new Set<Promise<void>>();
    const spare: Buffer[] = [];
    let buffer: Buffer = Buffer.allocUnsafe(this.chunkBytes);
    let filled = 0;
    let size = 0;
    let chunk = 0;
    // The first write that failed: every later step checks it, so no chunk is ever missing from a stored file.
    let failure: unknown;
    const flush = async () => {
      while (inFlight.size >= WRITES_IN_FLIGHT && !failure) await Promise.race(inFlight);
      if (failure) throw failure;
      const full = buffer;
      const write = this.db.execute(WRITE_CHUNK, [id, chunk++, full.subarray(0, filled)]).then(
        () => void spare.push(full),
        (err: unknown) => void (failure ??= err),
      );
      inFlight.add(write);
      void write.finally(() => inFlight.delete(write));
      buffer = spare.pop() ?? Buffer.allocUnsafe(this.chunkBytes);
      filled = 0;
    };
    try {
      for await (const part of source) {
        size += part.byteLength;
        if (size > maxBytes) throw new FileTooLarge(maxBytes);
        hash.update(part);
        for (let at = 0; at < part.byteLength; ) {
          const n = Math.min(part.byteLength - at, this.chunkBytes - filled);
          buffer.set(part.subarray(at, at + n), filled);
          filled += n;
          at += n;
          if (filled === this.chunkBytes) await flush();
        }
      }
      if (filled > 0 || chunk === 0) await flush();
      await Promise.all(inFlight);
      if (failure) throw failure;
    } catch (err) {
      // Whatever was written goes (a write still in flight may land after: the cleanup of unattached uploads
      // drops it, and no file row ever points at it).
      await Promise.allSettled(inFlight);
      await this.drop(id).catch(() => undefined);
      throw err;
    }
    return { size, sha256: hash.digest('hex'), chunkBytes: this.chunkBytes };
  }

  async *read(id: string, stored: StoredBytes, range: ByteRange = { start: 0, end: stored.size - 1 }): AsyncIterable<Buffer> {
    if (stored.size === 0) return;
    const first = Math.floor(range.start / stored.chunkBytes);
    const last = Math.floor(range.end / stored.chunkBytes);
    // A few chunks a request: a whole 10 MB file is never held in memory at once.
    for (let from = first; from <= last; from += 4) {
      const to = Math.min(last, from + 3);
      const rs = await this.db.execute(READ_CHUNKS, [id, from, to]);
      // A stored file has every chunk: a gap would serve wrong bytes, never silently.
      if (rs.rows.length !== to - from + 1) throw new Error(`attachment ${id}: chunks ${from}-${to} are not all there`);
      for (const row of rs.rows) {
        const data = row.data as Buffer;
        const offset = (row.chunk as number) * stored.chunkBytes;
        const start = Math.max(0, range.start - offset);
        const end = Math.min(data.byteLength, range.end - offset + 1);
        if (end > start) yield data.subarray(start, end);
      }
    }
  }

  async drop(id: string): Promise<void> {
    await this.db.execute(DROP_CHUNKS, [id]);
  }
}
