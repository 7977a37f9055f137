/**
 * GET /attachments/<id>?token=<link token>: a file's bytes, for the user its
 * link was signed for while they may still see it (openAttachment checks),
 * with the type its bytes showed, an ETag (its SHA-256), and one byte range
 * (Range: bytes=a-b, bytes=a-, bytes=-n). Nothing else is served there:
 * a missing file, a bad or expired link, and a file the user may not see are
 * the same 404. Files are never rendered as pages of this origin: nosniff, a
 * sandboxing CSP, and a download for anything but an image.
 */
import { Readable } from 'node:stream';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import type { Services } from '../../../resolvers/services.js';
import { openAttachment, type Servable } from '../../../resolvers/rooms/messages/attachments.js';
import type { ByteRange } from '../../../db/files/file-bytes.js';
import { AppError, ErrorCode } from '../../../errors.js';

const PATH = /^\/attachments\/([^/]{1,64})$/;

/** The one range a Range header asks of a file of `size` bytes: undefined for none (or several), null when unsatisfiable. */
export function rangeOf(header: string | null, size: number): ByteRange | null | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return undefined;
  const [, a, b] = m;
  if (a === '' && b === '') return null;
  if (a === '') {
    const suffix = Number(b);
    return suffix === 0 || size === 0 ? null : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  return start >= size || end < start ? null : { start, end };
}

export function useAttachmentRoute(services: Services): YogaPlugin {
  return {
    onRequest({ url, request, endResponse, fetchAPI }) {
      const match = PATH.exec(url.pathname);
      if (!match) return;
      const respond = (status: number, headers: Record<string, string> = {}, body: BodyInit | null = null) =>
        endResponse(new fetchAPI.Response(body, { status, headers }));
      if (request.method !== 'GET' && request.method !== 'HEAD') return respond(405, { allow: 'GET, HEAD' });
      let id: string;
      try {
        id = decodeURIComponent(match[1]!);
      } catch {
        return respond(404, { 'content-type': 'text/plain' }, 'Not found');
      }
      return openAttachment(services, id, url.searchParams.get('token') ?? '').then(
        (file) => serve(file, request, respond),
        (err: unknown) => {
          if (err instanceof AppError && err.code === ErrorCode.NOT_FOUND) return respond(404, { 'content-type': 'text/plain' }, 'Not found');
          services.logger.warn({ err }, 'an attachment could not be served');
          return respond(503, { 'content-type': 'text/plain', 'retry-after': '2' }, 'Storage did not answer: retry');
        },
      );
    },
  };
}

function serve(file: Servable, request: Request, respond: (status: number, headers?: Record<string, string>, body?: BodyInit | null) => void): void {
  const { record } = file;
  const etag = `"${record.sha256}"`;
  const image = record.contentType.startsWith('image/');
  const headers: Record<string, string> = {
    'content-type': record.contentType,
    etag,
    'accept-ranges': 'bytes',
    'cache-control': 'private, max-age=300',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'content-disposition': `${image ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(record.filename)}`,
  };
  if (request.headers.get('if-none-match') === etag) return respond(304, headers);
  const range = rangeOf(request.headers.get('range'), record.size);
  if (range === null) return respond(416, { ...headers, 'content-range': `bytes */${record.size}` });
  // A Node stream: whatwg-node's Response streams it as it is read, a few chunks at a time.
  const body =
    request.method === 'HEAD' ? null : (Readable.from(file.read(range ?? undefined), { objectMode: false, highWaterMark: 256 * 1024 }) as unknown as BodyInit);
  if (range === undefined) return respond(200, { ...headers, 'content-length': String(record.size) }, body);
  respond(206, { ...headers, 'content-length': String(range.end - range.start + 1), 'content-range': `bytes ${range.start}-${range.end}/${record.size}` }, body);
}
