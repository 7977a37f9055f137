/** Uploading a file, for no message yet: its type sniffed from its bytes, a safe name, its bytes, then its row. */
import type { Context } from '../context.js';
import type { AttachmentRecord } from '../../db/files/attachments.js';
import { FileTooLarge, type StoredBytes } from '../../db/files/file-bytes.js';
import { AppError, ErrorCode, LimitName, badInput, limitReached } from '../../errors.js';
import { Limits } from '../../limits.js';
import { dayBucket } from '../../buckets.js';
import { newTimeUuid } from '../../timeuuids.js';
import { requireViewer } from '../shared/guards.js';
import { sniff, type SniffedType } from './sniff.js';

const limits = Limits.attachments;

/**
 * An uploaded file as the API takes it: the name its client gave, and its bytes as they arrive (a multipart
 * upload's, src/server/http/files/upload-form.ts), done only once its whole request was read and found sound.
 */
export interface UploadedFile {
  name: string;
  stream(): AsyncIterable<Uint8Array>;
}

/** The extensions a file of each type may be saved under; the first is given to a name without one of them. */
const EXTENSIONS: Record<SniffedType, string[]> = {
  'image/png': ['png'],
  'image/jpeg': ['jpg', 'jpeg'],
  'image/gif': ['gif'],
  'image/webp': ['webp'],
  'application/pdf': ['pdf'],
  'text/plain; charset=utf-8': ['txt', 'md', 'csv', 'log'],
};

/**
 * Characters a file name loses: every control character (C0, DEL, C1: category Cc), every format character
 * (category Cf: the bidi marks, embeddings, overrides and isolates, U+061C, zero-width characters, soft hyphens),
 * which can make "txt.exe" read as "exe.txt" or hide part of a name, line and paragraph separators, and quotes.
 */
const UNSAFE_IN_NAMES = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}"]/gu;

/** A name as stored or served, cleaned of UNSAFE_IN_NAMES (names stored before a rule was added are cleaned on read). */
export const cleanName = (name: string) => name.replace(UNSAFE_IN_NAMES, '');

/**
 * A base name, never a path: the last part after any / or \, cleaned (cleanName), ending in an extension of the
 * type its bytes showed (a text file named invoice.js downloads as invoice.js.txt), at most 255 characters.
 */
export function safeFilename(raw: string, type: SniffedType): string {
  const base = cleanName(raw.split(/[/\\]/).pop() ?? '').trim();
  const name = base === '.' || base === '..' || base === '' ? 'file' : base;
  const allowed = EXTENSIONS[type];
  const ext = /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase();
  const suffix = ext && allowed.includes(ext) ? '' : `.${allowed[0]}`;
  // Cut at a character, never between the two halves of one.
  const kept = name.slice(0, limits.filenameMax - suffix.length).replace(/[\uD800-\uDBFF]$/, '');
  return kept + suffix;
}

/**
 * Stores an upload of the viewer's as its bytes arrive: refused past the daily count, off the type allowlist (from
 * its first bytes, before any is stored), or past the size limit. Its bytes are stored as they come and its row
 * written once they are all in (the body read and found sound): a refused or cut-off upload is never readable.
 */
export async function uploadFile(ctx: Context, file: UploadedFile): Promise<AttachmentRecord> {
  const viewer = requireViewer(ctx);
  const { stores, rateLimiter, clock } = ctx.services;
  if (!file || typeof file.stream !== 'function') throw badInput('file', 'file must be a file of a multipart upload');
  const bytes = file.stream()[Symbol.asyncIterator]();
  try {
    const now = clock.now();
    const day = dayBucket(now);
    const window = await rateLimiter.increment(`uploads:${viewer.login}:${day}`, 86_400);
    const perDay = ctx.services.config.rooms.uploadsPerDay;
    if (window.count > perDay) throw limitReached(LimitName.UPLOADS_PER_DAY, perDay, `At most ${perDay} uploads a day`);
    const { head, whole } = await readHead(bytes, limits.headBytes);
    const sniffed = sniff(head.subarray(0, limits.headBytes), whole);
    if (!sniffed) throw badInput('file', 'Unsupported file type: PNG, JPEG, GIF, WebP, PDF and UTF-8 text are taken');
    const id = newTimeUuid(now).toString();
    // Listed first: an upload cut off anywhere below is found by the cleanup of unattached uploads.
    await stores.attachments.listUnattached(day, id);
    const stored = await storeBytes(ctx, id, head, bytes);
    const record = { id, owner: viewer.login, filename: safeFilename(file.name, sniffed.contentType), contentType: sniffed.contentType, ...stored, width: sniffed.width, height: sniffed.height };
    await stores.attachments.insert(record);
    return { ...record, roomName: null, messageId: null };
  } finally {
    // Refused before its end: the bytes are read no further (the rest of the body is dropped as it comes).
    await bytes.return?.();
  }
}

/** The first `size` bytes or a little more, or all of them when the file is shorter (`whole`). */
async function readHead(bytes: AsyncIterator<Uint8Array>, size: number): Promise<{ head: Buffer; whole: boolean }> {
  const parts: Uint8Array[] = [];
  let read = 0;
  while (read < size) {
    const next = await bytes.next();
    if (next.done) return { head: Buffer.concat(parts), whole: true };
    parts.push(next.value);
    read += next.value.byteLength;
  }
  return { head: Buffer.concat(parts), whole: false };
}

/** The file's bytes (its head, then the rest as it arrives) stored under `id`; past the size limit, a 413. */
async function storeBytes(ctx: Context, id: string, head: Buffer, rest: AsyncIterator<Uint8Array>): Promise<StoredBytes> {
  async function* all(): AsyncGenerator<Uint8Array> {
    if (head.byteLength > 0) yield head;
    for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
  }
  try {
    return await ctx.services.stores.fileBytes.write(id, all(), limits.maxFileBytes);
  } catch (err) {
    if (err instanceof FileTooLarge) throw fileTooLarge();
    throw err;
  }
}

const fileTooLarge = () =>
  new AppError(ErrorCode.REQUEST_ENTITY_TOO_LARGE, `A file holds at most ${limits.maxFileBytes} bytes`, {
    limit: 'fileSize',
    max: limits.maxFileBytes,
    http: { status: 413, headers: { connection: 'close' } },
  });
