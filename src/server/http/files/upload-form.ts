/**
 * An upload's multipart body (the GraphQL multipart request spec) read as it
 * streams in, with busboy: the spec sends the operations and the map before
 * the files, so once the file's part begins the request's parameters are
 * known and the operation runs, its resolver reading the file from the socket
 * as it arrives (as graphql-upload's processRequest does). One file, 3 parts
 * in all, fields of at most FIELD_BYTES, the file at most
 * Limits.attachments.maxFileBytes (413 as soon as it is past that).
 *
 * The file's bytes end only once the whole body has been read and found
 * sound (its closing boundary, nothing past a limit): a resolver that stores
 * a file as its bytes end never keeps one from a body refused after it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import { AppError, ErrorCode } from '../../../errors.js';
import { Limits } from '../../../limits.js';
import type { UploadedFile } from '../../../resolvers/files/uploads.js';
import { UploadBody, type BodyBounds } from './upload-body.js';

/** The operations and map fields: JSON far smaller than this. */
export const FIELD_BYTES = 64 * 1024;

export const badRequest = (message: string) => new AppError(ErrorCode.BAD_REQUEST, message, { http: { status: 400 } });

const fileTooLarge = () =>
  new AppError(ErrorCode.REQUEST_ENTITY_TOO_LARGE, `A file holds at most ${Limits.attachments.maxFileBytes} bytes`, {
    limit: 'fileSize',
    max: Limits.attachments.maxFileBytes,
    http: { status: 413, headers: { connection: 'close' } },
  });

const UNREADABLE = 'The multipart body could not be read (cut off, or not multipart)';
const TOO_MANY_PARTS = 'An upload is one file with its operations and map: 3 parts at most';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** The file of an upload as its resolver reads it: its bytes, once, as they arrive. */
class StreamedFile implements UploadedFile {
  private taken = false;
  constructor(
    readonly name: string,
    private readonly file: Readable,
    private readonly form: MultipartUpload,
  ) {}

  stream(): AsyncIterable<Uint8Array> {
    if (this.taken) throw new Error('An uploaded file is read once');
    this.taken = true;
    return this.form.chunks(this.file);
  }
}

export class MultipartUpload {
  private readonly parameters = deferred<Record<string, unknown>>();
  private readonly parsed = deferred<void>();
  /** Settles once the whole body is read and sound (resolves), or will not be (rejects with the first failure). */
  readonly complete: Promise<void>;
  private operations?: Record<string, unknown>;
  /** The one file the map names, and where it goes; null for a map of none; undefined until the map is read. */
  private mapped?: { part: string; path: string } | null;
  private file?: Readable;
  private failure?: AppError;
  private readonly body: UploadBody;

  constructor(req: IncomingMessage, res: ServerResponse, bounds: BodyBounds) {
    const body = (this.body = new UploadBody(req, res, bounds, (error) => this.fail(error)));
    this.complete = Promise.all([body.whole, this.parsed.promise]).then(() => undefined);
    this.complete.catch(() => undefined);
    let busboy: BusboyInstance;
    try {
      busboy = Busboy({
        headers: req.headers as BusboyHeaders,
        limits: { files: 1, fields: 2, parts: 3, fieldSize: FIELD_BYTES, fileSize: Limits.attachments.maxFileBytes },
        // The file in pieces of up to 64 KiB (a socket read's), not Node's default 16 KiB: fewer steps per chunk row.
        fileHwm: 64 * 1024,
      });
    } catch {
      body.start(null);
      this.fail(badRequest(UNREADABLE));
      return;
    }
    busboy.on('field', (name, value, _nameTruncated, valueTruncated) => this.refusing(() => this.onField(name, value, valueTruncated)));
    busboy.on('file', (name, stream, filename) => {
      // Destroyed with the failure when there is one: its reader sees that.
      stream.on('error', () => undefined);
      this.refusing(() => this.onFile(name, stream, filename));
    });
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit']) busboy.on(limit, () => this.fail(badRequest(TOO_MANY_PARTS)));
    busboy.on('error', () => this.fail(badRequest(UNREADABLE)));
    busboy.on('finish', () => this.onFinish());
    body.start(busboy);
  }

  /** Settles once the body is read to its end, or will not be (see UploadBody.whole). */
  get whole(): Promise<void> {
    return this.body.whole;
  }

  /** The request's parameters, the file put where the map says: known once the file's part begins. */
  get params(): Promise<Record<string, unknown>> {
    return this.parameters.promise;
  }

  /** Stops at `error` (the first one counts): the parameters, the file's reader and the body are told. */
  fail(error: AppError, close = false): void {
    if (this.failure) return;
    this.failure = error;
    this.parameters.reject(error);
    this.parsed.reject(error);
    this.file?.destroy(error);
    this.body.fail(error, close);
  }

  /** The file's bytes as they arrive; done once the whole body is read and sound. */
  async *chunks(file: Readable): AsyncGenerator<Uint8Array> {
    let read = false;
    try {
      for await (const chunk of file.iterator({ destroyOnReturn: false })) yield chunk as Buffer;
      await this.complete;
      read = true;
    } catch {
      throw this.failure ?? badRequest(UNREADABLE);
    } finally {
      // Its reader stopped early (a refusal): the rest of the body is dropped as it comes.
      if (!read) this.body.drain();
    }
  }

  private onField(name: string, value: string, truncated: boolean): void {
    if (this.failure) return;
    if (truncated) return this.fail(badRequest(`The multipart field "${name}" is over ${FIELD_BYTES} bytes`));
    if (name === 'operations' && !this.operations) {
      const operations = json(name, value);
      if (!operations || typeof operations !== 'object' || Array.isArray(operations)) return this.fail(badRequest('The multipart field "operations" must be one operation'));
      this.operations = operations as Record<string, unknown>;
    } else if (name === 'map' && this.operations && this.mapped === undefined) {
      this.mapped = mapOf(json(name, value));
    } else {
      this.fail(badRequest('An upload is the field "operations", then "map", then the file'));
    }
  }

  /** Runs a step of the parse, a refusal it throws failing the upload (busboy's events must not throw). */
  private refusing(step: () => void): void {
    try {
      step();
    } catch (err) {
      this.fail(err instanceof AppError ? err : badRequest(UNREADABLE));
    }
  }

  private onFile(name: string, stream: Readable, filename: string | undefined): void {
    if (this.failure) return;
    if (!this.operations || this.mapped === undefined) return this.fail(badRequest('The fields "operations" and "map" come before the file'));
    if (!this.mapped || name !== this.mapped.part) return this.fail(badRequest(`The body holds a file "${name}" the map does not name`));
    stream.once('limit', () => this.fail(fileTooLarge(), true));
    this.file = stream;
    put(this.operations, this.mapped.path, new StreamedFile(filename ?? 'file', stream, this));
    this.parameters.resolve(this.operations);
  }

  private onFinish(): void {
    if (this.failure) return;
    if (!this.operations) return this.fail(badRequest('The multipart field "operations" is missing'));
    if (this.mapped === undefined) return this.fail(badRequest('The multipart field "map" is missing'));
    if (this.mapped && !this.file) return this.fail(badRequest(`The map names a file "${this.mapped.part}" the body does not hold`));
    this.parameters.resolve(this.operations);
    this.parsed.resolve();
  }
}

function json(name: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw badRequest(`The multipart field "${name}" is not JSON`);
  }
}

/** The map of an upload: at most one file, at one path (the same file at many would be stored once per path). */
function mapOf(map: unknown): { part: string; path: string } | null {
  if (!map || typeof map !== 'object' || Array.isArray(map)) throw badRequest('The multipart field "map" must be an object');
  const entries = Object.entries(map as Record<string, unknown>);
  if (entries.length === 0) return null;
  const [part, paths] = entries[0]!;
  if (entries.length > 1) throw badRequest('An upload holds one file: "map" names one');
  if (!Array.isArray(paths) || paths.length !== 1) throw badRequest('Each entry of "map" is a list of one path');
  return { part, path: String(paths[0]) };
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
