/**
 * Attachments: uploading a file (its type sniffed from its bytes, never taken
 * from the client), attaching uploads to a message as it is posted, the
 * signed links through which they are served, and what each link may serve.
 *
 * Two steps, upload then post with the ids, rather than files inside the
 * post: a post stays a small JSON request, idempotent with its
 * clientMessageId, that holds the room's turn for milliseconds rather than
 * for a 10 MB body; an upload fails or is retried on its own; and an upload
 * cut off leaves no message pointing at nothing.
 */
import type { Context } from '../context.js';
import type { Services } from '../services.js';
import type { AttachmentRecord } from '../../db/attachments/attachments.js';
import { FileTooLarge, type ByteRange, type StoredBytes } from '../../db/attachments/attachment-bytes.js';
import type { MessageRecord } from '../../db/rooms/messages/message-row.js';
import { AppError, ErrorCode, LimitName, badInput, limitReached, notFound } from '../../errors.js';
import { Limits } from '../../limits.js';
import { dayBucket } from '../../buckets.js';
import { isTimeUuid, newTimeUuid, timeUuidDate } from '../../timeuuids.js';
import { requireViewer } from '../shared/guards.js';
import { isParticipant } from '../rooms/access.js';
import { decodeMessageId, encodeMessageId } from '../rooms/ids.js';
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
export async function uploadAttachment(ctx: Context, file: UploadedFile): Promise<AttachmentView> {
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
    return { ...record, roomName: null, messageId: null, via: null };
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

/**
 * Attaches the viewer's uploads to a message about to be written, each to it alone (an LWT each): refused past
 * the count per message, and for an id that is not an unattached upload of the viewer's (an earlier try of the
 * same post, with the same message id, finds its own). Returns the ids in order.
 */
export async function attachUploads(ctx: Context, ids: readonly string[] | null | undefined, roomName: string, messageId: string): Promise<string[]> {
  if (!ids || ids.length === 0) return [];
  const viewer = requireViewer(ctx);
  if (ids.length > limits.perMessage) throw limitReached(LimitName.ATTACHMENTS_PER_MESSAGE, limits.perMessage, `At most ${limits.perMessage} files a message`);
  const keys = ids.map((id) => id.trim().toLowerCase());
  if (new Set(keys).size !== keys.length) throw badInput('attachments', 'Each file once');
  const { stores } = ctx.services;
  const found = new Map((await stores.attachments.byIds(keys.filter(isTimeUuid))).map((r) => [r.id, r]));
  // Every id checked before any is attached: a post refused for one of them attaches none.
  for (const key of keys) {
    const record = found.get(key);
    if (!record || record.owner !== viewer.login) throw badInput('attachments', 'An attachment must be an upload of yours');
    if (record.messageId !== null && record.messageId !== messageId) throw badInput('attachments', 'That upload is attached to another message');
  }
  for (const key of keys) {
    if (!(await stores.attachments.attach(key, viewer.login, roomName, messageId))) throw badInput('attachments', 'That upload is attached to another message');
  }
  return keys;
}

/**
 * Takes a posted message's uploads off the list of unattached ones, once the message is written (an upload whose
 * message was never written stays listed: the cleanup finds it).
 */
export async function unlistAttached(ctx: Context, message: MessageRecord): Promise<void> {
  for (const key of message.attachments) await ctx.services.stores.attachments.unlist(dayBucket(timeUuidDate(key)), key);
}


/** A file as a message shows it: its record, and the message it is read through (null: an upload not attached yet). */
export interface AttachmentView extends AttachmentRecord {
  via: string | null;
}

/** A message's files, in order (those gone since are left out): its own uploads, or a forwarded original's. */
export async function attachmentsOf(ctx: Context, message: MessageRecord): Promise<AttachmentView[]> {
  if (message.attachments.length === 0 || message.deleted || !message.visible) return [];
  const found = new Map((await ctx.services.stores.attachments.byIds(message.attachments)).map((r) => [r.id, r]));
  const via = encodeMessageId(message);
  return message.attachments.flatMap((id) => {
    const record = found.get(id);
    return record ? [{ ...record, filename: cleanName(record.filename), via }] : [];
  });
}

/**
 * Where the viewer fetches a file: a path on this server with a link token for them, good for urlTtlSeconds,
 * naming the message it is read through: it serves while that message shows the file to them.
 */
export async function attachmentUrl(ctx: Context, attachment: AttachmentView): Promise<string> {
  const viewer = requireViewer(ctx);
  const token = await ctx.services.tokens.issueLink(viewer.login, `${attachment.id}|${attachment.via ?? ''}`, limits.urlTtlSeconds);
  return `/attachments/${attachment.id}?token=${token}`;
}

export interface Servable {
  record: AttachmentRecord;
  bytes: StoredBytes;
  read(range?: ByteRange): AsyncIterable<Buffer>;
}

/**
 * The file a link serves, checked now: the message the link names must still show it (not deleted or hidden, the
 * file among its attachments) to the link's user, who must still take part in its room; a link without a message
 * serves an upload not attached yet to its uploader only. NOT_FOUND for anything else, as for a file that is gone.
 */
export async function openAttachment(services: Services, id: string, token: string): Promise<Servable> {
  const key = id.toLowerCase();
  const gone = () => notFound('Attachment');
  let link: { login: string; resource: string };
  try {
    link = await services.tokens.verifyLink(token);
  } catch {
    throw gone();
  }
  const [linked, via] = link.resource.split('|') as [string, string | undefined];
  if (linked !== key || !isTimeUuid(key)) throw gone();
  const [record] = await services.stores.attachments.byIds([key]);
  if (!record) throw gone();
  if (!via) {
    if (record.owner !== link.login || record.messageId !== null) throw gone();
  } else {
    let message: MessageRecord | undefined;
    try {
      const at = decodeMessageId('via', via);
      message = await services.stores.roomMessages.byKey(at.roomName, at.bucket, at.messageId);
    } catch {
      throw gone();
    }
    if (!message || message.deleted || !message.visible || !message.attachments.includes(key)) throw gone();
    const room = await services.stores.rooms.byName(message.roomName);
    // The room the message was posted in, not one of the same name made since.
    if (!room || timeUuidDate(message.messageId) < room.createdAt || !isParticipant(room, link.login)) throw gone();
  }
  return { record: { ...record, filename: cleanName(record.filename) }, bytes: record, read: (range) => services.stores.fileBytes.read(key, record, range) };
}

/** A deleted message's own files go with it, rows then bytes (a forwarded copy's files are its original's: they stay). */
export async function dropAttachments(ctx: Context, message: MessageRecord): Promise<void> {
  const own = (await ctx.services.stores.attachments.byIds(message.attachments)).filter((r) => r.messageId === message.messageId);
  for (const record of own) {
    await ctx.services.stores.attachments.drop(record.id);
    await ctx.services.stores.fileBytes.drop(record.id);
  }
}
