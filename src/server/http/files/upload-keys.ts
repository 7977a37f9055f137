/**
 * An upload sent with an idempotency key (src/server/idempotency.ts): the
 * key's fingerprint can hash an operation's variables but not a file that is
 * still arriving, so the file counts by its name in the fingerprint and by
 * the SHA-256 of its bytes beside the kept answer. A retry with the same key,
 * name and bytes gets the first answer (the same Attachment); other bytes are
 * IDEMPOTENCY_KEY_REUSED. The bytes are only known once read whole: a run
 * refused before that (a type off the list, a daily limit) keeps no answer.
 */
import { createHash } from 'node:crypto';
import type { UploadedFile } from '../../../resolvers/files/uploads.js';

/** Where a file sits in the variables (the map's path), so it can be swapped for the copy that hashes it. */
interface Placed {
  holder: Record<string, unknown> | unknown[];
  slot: string | number;
  file: UploadedFile;
}

const isFile = (value: unknown): value is UploadedFile =>
  value !== null && typeof value === 'object' && typeof (value as UploadedFile).stream === 'function' && typeof (value as UploadedFile).name === 'string';

export class KeyedUpload {
  /** The variables as the fingerprint hashes them: each file as its name. */
  readonly fingerprinted: unknown;
  private readonly files: Placed[] = [];
  private digest?: string;

  constructor(variables: unknown) {
    this.fingerprinted = this.standIn(variables, undefined, undefined);
  }

  /** Whether the variables hold a file at all (a map of none is an ordinary mutation). */
  get holdsFile(): boolean {
    return this.files.length > 0;
  }

  /**
   * Swaps the file for one whose bytes are hashed as its resolver reads them; sha256() is known once they
   * were all read (a multipart upload holds one file: Limits in upload-form.ts).
   */
  hashAsRead(): void {
    const placed = this.files[0];
    if (!placed) return;
    const hash = createHash('sha256');
    const inner = placed.file;
    const self = this;
    const hashing: UploadedFile = {
      name: inner.name,
      async *stream() {
        for await (const chunk of inner.stream()) {
          hash.update(chunk);
          yield chunk;
        }
        self.digest = hash.digest('base64url');
      },
    };
    (placed.holder as Record<string | number, unknown>)[placed.slot] = hashing;
  }

  /** The SHA-256 of the bytes, once its resolver read them all; undefined before (or with no file). */
  sha256(): string | undefined {
    return this.digest;
  }

  /** Reads the file to its end storing nothing (a retry answered from the key), for the SHA-256 of its bytes. */
  async readWhole(): Promise<string | undefined> {
    const placed = this.files[0];
    if (!placed) return undefined;
    const hash = createHash('sha256');
    for await (const chunk of placed.file.stream()) hash.update(chunk);
    return hash.digest('base64url');
  }

  private standIn(value: unknown, holder: Placed['holder'] | undefined, slot: Placed['slot'] | undefined): unknown {
    if (isFile(value)) {
      if (holder !== undefined && slot !== undefined) this.files.push({ holder, slot, file: value });
      return { upload: value.name };
    }
    if (Array.isArray(value)) return value.map((item, i) => this.standIn(item, value, i));
    if (value === null || typeof value !== 'object') return value;
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) copy[k] = this.standIn(v, value as Record<string, unknown>, k);
    return copy;
  }
}
