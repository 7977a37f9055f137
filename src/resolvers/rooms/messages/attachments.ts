/** Files in messages: uploads attached to a message as it is posted, the files it shows, their signed links. */
import type { Context } from '../../context.js';
import type { Services } from '../../services.js';
import type { AttachmentRecord } from '../../../db/files/attachments.js';
import type { ByteRange, StoredBytes } from '../../../db/files/file-bytes.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';
import { LimitName, badInput, limitReached, notFound } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import { dayBucket } from '../../../buckets.js';
import { isTimeUuid, timeUuidDate } from '../../../timeuuids.js';
import { requireViewer } from '../../shared/guards.js';
import { isParticipant } from '../access/access.js';
import { decodeMessageId, encodeMessageId } from '../ids.js';
import { cleanName, uploadFile, type UploadedFile } from '../../files/uploads.js';

const limits = Limits.attachments;

/**
 * Attaches the viewer's uploads to a message about to be written, each to it alone (an LWT each): refused past
 * the count per message, and for an id that is not an unattached upload of the viewer's (an earlier try of the
 * same post, with the same message id, finds its own). Returns the ids in order.
 *
 * Two steps, upload (src/resolvers/files/uploads.ts) then post with the ids, rather than files inside the post: a
 * post stays a small JSON request, idempotent with its clientMessageId, that holds the room's turn for
 * milliseconds rather than for a 10 MB body; an upload fails or is retried on its own; and an upload cut off
 * leaves no message pointing at nothing.
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

/** Uploads one of the viewer's files (src/resolvers/files/uploads.ts): an Attachment read through no message yet. */
export async function uploadAttachment(ctx: Context, file: UploadedFile): Promise<AttachmentView> {
  return { ...(await uploadFile(ctx, file)), via: null };
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
