/**
 * Bodies over a limit are refused with 413 REQUEST_ENTITY_TOO_LARGE before
 * they are parsed, as Yoga's maxRequestBodySize does, without its cost on
 * every request: Yoga pipes each body through a TransformStream into a new
 * Request to count its bytes (with the stream pipeline's AbortController and
 * the DOMException it makes at the end), about 5 % of the CPU of a history
 * page (bench/results/requests.md). A body with a Content-Length needs no
 * counting: Node's HTTP parser reads exactly that many bytes and refuses a
 * request that sends Transfer-Encoding too. Only a chunked body is counted:
 * here for the parsers Yoga reads bodies with, and, for an upload (any
 * multipart request, which useUploads reads from the socket itself), by its
 * reader (upload-body.ts), which counts every byte it takes against the same
 * multipart limit and refuses with the same 413.
 */
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import { AppError, ErrorCode } from '../../errors.js';

/** A multipart request: an upload (uploads.ts), with a limit of its own. */
export const isMultipart = (request: Request) => (request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data');

type FetchApi = { Request: typeof Request; TransformStream: typeof TransformStream };

/**
 * `Connection: close` as well: the client may still be sending the rest of a
 * body nobody reads, so that connection cannot carry another request.
 */
export const tooLarge = (limit: number) =>
  new AppError(ErrorCode.REQUEST_ENTITY_TOO_LARGE, `Request body too large: at most ${limit} bytes`, {
    http: { status: 413, headers: { connection: 'close' } },
  });

/** `jsonLimit` for every body, `multipartLimit` for a multipart one (an upload). */
export function useRequestBodyLimit(jsonLimit: number, multipartLimit = jsonLimit): YogaPlugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const limit = isMultipart(request) ? multipartLimit : jsonLimit;
      const contentLength = request.headers.get('content-length');
      if (contentLength !== null) {
        if (Number(contentLength) > limit) throw tooLarge(limit);
        return;
      }
      // An upload's reader counts its own bytes (see above).
      if (isMultipart(request) || !requestParser || !request.body) return;
      setRequestParser((req) => requestParser(countingBody(req, limit, fetchAPI as unknown as FetchApi)));
    },
  };
}

/** The same request, its body failing with 413 once more than `limit` bytes have streamed in. */
function countingBody(request: Request, limit: number, fetchAPI: FetchApi): Request {
  // A body from the platform pipes only through the platform's stream; whatwg-node's through its own.
  const Transform = request.body instanceof globalThis.ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
  let received = 0;
  const counted = request.body!.pipeThrough(
    new Transform<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        if (received > limit) controller.error(tooLarge(limit));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new fetchAPI.Request(request.url, { method: request.method, headers: request.headers, body: counted, duplex: 'half' } as RequestInit);
}
