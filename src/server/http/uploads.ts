/**
 * File uploads over HTTP, by the GraphQL multipart request spec (the
 * operations, a map, and the file): one file per request, at most
 * Limits.attachments.maxFileBytes, 3 parts in all, read with those limits
 * before anything else is (Yoga's own parser reads any number of files of
 * any size). And a multipart request must carry a header no HTML form can
 * send (x-graphql-yoga-csrf or graphql-preflight): a page on another site
 * can post a form to this server with the user's cookies, never with a header
 * of its choosing, so such a post is refused before it is read.
 */
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import { AppError, ErrorCode, unauthenticated } from '../../errors.js';
import { bearerToken } from '../../auth/authenticate.js';
import type { TokenService } from '../../auth/tokens.js';
import { Limits } from '../../limits.js';

/** Headers a page must send with an upload (and CORS lets an allowed origin send). */
export const PREFLIGHT_HEADERS = ['x-graphql-yoga-csrf', 'graphql-preflight'];
/** The operations and map fields: JSON far smaller than this. */
const FIELD_BYTES = 64 * 1024;
/** Room for the parts' headers and boundaries around the file. */
const OVERHEAD_BYTES = FIELD_BYTES * 2 + 16 * 1024;

/** The largest body a multipart request may have (useRequestBodyLimit takes it for those). */
export const MAX_UPLOAD_REQUEST_BYTES = Limits.attachments.maxFileBytes + OVERHEAD_BYTES;

export const isMultipart = (request: Request) => (request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data');

const badRequest = (message: string) => new AppError(ErrorCode.BAD_REQUEST, message, { http: { status: 400 } });

type FormDataLimits = { fileSize: number; files: number; fields: number; parts: number; fieldSize: number };

/** Uploads read at once by an instance: each may hold a 10 MB body in memory while it is read. */
const UPLOADS_AT_ONCE = 4;

/**
 * Only a signed-in user's upload is read at all (its token checked before its body), and at most UPLOADS_AT_ONCE
 * at a time: past that, SERVICE_UNAVAILABLE with retryAfter, before the body is read.
 */
export function useUploads(tokens: TokenService): YogaPlugin {
  let reading = 0;
  return {
    onRequestParse({ request, setRequestParser }) {
      if (request.method !== 'POST' || !isMultipart(request)) return;
      if (!PREFLIGHT_HEADERS.some((h) => request.headers.has(h))) {
        throw badRequest(`A multipart request needs the header ${PREFLIGHT_HEADERS[0]}: a form posted from another site cannot send it`);
      }
      const token = bearerToken(request.headers.get('authorization'));
      if (!token) throw unauthenticated();
      setRequestParser(async (req) => {
        try {
          await tokens.verify(token);
        } catch {
          throw unauthenticated();
        }
        if (reading >= UPLOADS_AT_ONCE) {
          throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Too many uploads at once: retry shortly', {
            service: 'uploads',
            retryAfter: 1,
            http: { status: 503, headers: { 'retry-after': '1' } },
          });
        }
        reading += 1;
        try {
          return await readUpload(req);
        } finally {
          reading -= 1;
        }
      });
    },
  };
}

/** The multipart body read within its limits, as the request's parameters. */
async function readUpload(req: Request): Promise<Record<string, unknown>> {
  const limits: FormDataLimits = { fileSize: Limits.attachments.maxFileBytes, files: 1, fields: 2, parts: 3, fieldSize: FIELD_BYTES };
  let form: FormData;
  try {
    form = await (req as Request & { formData(opts: { formDataLimits: FormDataLimits }): Promise<FormData> }).formData({ formDataLimits: limits });
  } catch (err) {
    const message = (err as Error).message ?? '';
    if (message.startsWith('File size limit exceeded')) {
      throw new AppError(ErrorCode.REQUEST_ENTITY_TOO_LARGE, `A file holds at most ${Limits.attachments.maxFileBytes} bytes`, {
        limit: 'fileSize',
        max: Limits.attachments.maxFileBytes,
        http: { status: 413, headers: { connection: 'close' } },
      });
    }
    if (/limit exceeded/.test(message)) throw badRequest('An upload is one file with its operations and map: 3 parts at most');
    throw badRequest('The multipart body could not be read (cut off, or not multipart)');
  }
  return paramsOf(form);
}

/** The request's parameters, each file put where the map says, as the spec has it. */
function paramsOf(form: FormData): Record<string, unknown> {
  const json = (name: string): unknown => {
    const value = form.get(name);
    if (typeof value !== 'string') throw badRequest(`The multipart field "${name}" is missing`);
    try {
      return JSON.parse(value);
    } catch {
      throw badRequest(`The multipart field "${name}" is not JSON`);
    }
  };
  const operations = json('operations');
  if (!operations || typeof operations !== 'object' || Array.isArray(operations)) throw badRequest('The multipart field "operations" must be one operation');
  const map = json('map');
  if (!map || typeof map !== 'object' || Array.isArray(map)) throw badRequest('The multipart field "map" must be an object');
  for (const [part, paths] of Object.entries(map as Record<string, unknown>)) {
    const file = form.get(part);
    if (!file || typeof file === 'string') throw badRequest(`The map names a file "${part}" the body does not hold`);
    // One place per file: the same file at many paths would be stored once per path from one body.
    if (!Array.isArray(paths) || paths.length !== 1) throw badRequest('Each entry of "map" is a list of one path');
    for (const path of paths) put(operations as Record<string, unknown>, String(path), file);
  }
  return operations as Record<string, unknown>;
}

/** Sets `value` at a dotted path ("variables.file") that must already exist as a key holding null. */
function put(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at: Record<string, unknown> = target;
  for (const key of keys.slice(0, -1)) {
    const next = at[key];
    if (!next || typeof next !== 'object' || key === '__proto__' || key === 'constructor' || key === 'prototype') throw badRequest(`The map path ${path} is not in the operations`);
    at = next as Record<string, unknown>;
  }
  const last = keys.at(-1)!;
  if (!(last in at) || at[last] !== null || last === '__proto__') throw badRequest(`The map path ${path} does not name a null in the operations`);
  at[last] = value;
}
