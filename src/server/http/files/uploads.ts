/**
 * File uploads over HTTP, by the GraphQL multipart request spec (the
 * operations, a map, and the file), read as they stream in (upload-form.ts)
 * from the socket (upload-body.ts), within the body limit, a minimum rate and
 * a total time, into the resolver that stores the file as it arrives.
 *
 * Before a byte of the body is read, an upload must:
 * - carry a header no HTML form can send (x-graphql-yoga-csrf or
 *   graphql-preflight): a page on another site can post a form to this server
 *   with the user's cookies, never with a header of its choosing;
 * - carry a session, checked as every request's is (authenticate: signature,
 *   expiry, revocation, and the same `reason` when refused);
 * - find a slot: at most Limits.uploads.perUserAtOnce of one user's uploads at
 *   once on an instance (RATE_LIMITED, UPLOADS_AT_ONCE) and perInstanceAtOnce
 *   in all (SERVICE_UNAVAILABLE).
 * A refusal then drops the body as it comes, unparsed (within the same
 * bounds), so that the client reads it and the connection serves its next
 * request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import { AppError, ErrorCode, RateLimitReason, rateLimited, unauthenticated } from '../../../errors.js';
import { authenticate, bearerToken } from '../../../auth/authenticate.js';
import type { Services } from '../../../resolvers/services.js';
import { Limits } from '../../../limits.js';
import { isMultipart } from '../request-body-limit.js';
import { UploadBody, type BodyBounds } from './upload-body.js';
import { FIELD_BYTES, MultipartUpload, badRequest } from './upload-form.js';

/** Headers a page must send with an upload (and CORS lets an allowed origin send). */
export const PREFLIGHT_HEADERS = ['x-graphql-yoga-csrf', 'graphql-preflight'];
/** Room for the parts' headers and boundaries around the file. */
const OVERHEAD_BYTES = FIELD_BYTES * 2 + 16 * 1024;

/** The largest body a multipart request may have (useRequestBodyLimit takes it for those, and an upload's reader). */
export const MAX_UPLOAD_REQUEST_BYTES = Limits.attachments.maxFileBytes + OVERHEAD_BYTES;

/** Uploads under way on this instance: at most `perUser` of one user's, `perInstance` in all. */
class UploadSlots {
  private inUse = 0;
  private readonly byUser = new Map<string, number>();

  constructor(
    private readonly perUser: number,
    private readonly perInstance: number,
  ) {}

  /** A slot for an upload of `login`'s, or a refusal; the function returned gives it back (once). */
  take(login: string): () => void {
    const theirs = this.byUser.get(login) ?? 0;
    if (theirs >= this.perUser) {
      throw rateLimited(RateLimitReason.UPLOADS_AT_ONCE, `At most ${this.perUser} uploads at once: retry when one is done`, 1, {
        max: this.perUser,
        http: { status: 429, headers: { 'retry-after': '1' } },
      });
    }
    if (this.inUse >= this.perInstance) {
      throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Too many uploads at once: retry shortly', {
        service: 'uploads',
        retryAfter: 1,
        http: { status: 503, headers: { 'retry-after': '1' } },
      });
    }
    this.inUse += 1;
    this.byUser.set(login, theirs + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.inUse -= 1;
      const left = (this.byUser.get(login) ?? 1) - 1;
      if (left > 0) this.byUser.set(login, left);
      else this.byUser.delete(login);
    };
  }
}

export function useUploads(svc: Services): YogaPlugin {
  const slots = new UploadSlots(Limits.uploads.perUserAtOnce, Limits.uploads.perInstanceAtOnce);
  const bounds: BodyBounds = {
    maxBytes: MAX_UPLOAD_REQUEST_BYTES,
    minBytesPerSecond: svc.config.rooms.uploadMinBytesPerSecond,
    rateWindowMs: svc.config.rooms.uploadRateWindowMs,
    maxMs: Limits.uploads.maxSeconds * 1000,
  };
  return {
    async onRequestParse({ request, serverContext, setRequestParser }) {
      if (request.method !== 'POST' || !isMultipart(request)) return;
      const { req, res } = serverContext as { req?: IncomingMessage; res?: ServerResponse };
      let release: () => void;
      try {
        if (!req || !res) throw badRequest('Uploads are read from the HTTP server only');
        if (!PREFLIGHT_HEADERS.some((h) => request.headers.has(h))) {
          throw badRequest(`A multipart request needs the header ${PREFLIGHT_HEADERS[0]}: a form posted from another site cannot send it`);
        }
        const session = await authenticate(svc, bearerToken(request.headers.get('authorization')));
        if (!session) throw unauthenticated();
        release = slots.take(session.login);
      } catch (err) {
        // The body is never parsed nor stored, only dropped as it comes (within the limit, the minimum rate and the
        // total time): a client still sending it then reads the refusal, where a closed connection would be all a
        // fetch() reports.
        if (req && res) new UploadBody(req, res, bounds, () => undefined).start(null);
        throw err;
      }
      const form = new MultipartUpload(req, res, bounds);
      // The slot is held while the body is read (or drained) and until the answer is sent.
      const answered = new Promise<void>((resolve) => res.once('close', resolve));
      void Promise.allSettled([form.whole, answered]).then(release);
      setRequestParser(() => form.params);
    },
  };
}
