/**
 * Password hashing with scrypt from node:crypto, at a cost from OWASP's
 * password storage cheat sheet (src/config.ts). A key is derived off the
 * event loop: by the server on niced threads of its own (src/auth/scrypt-threads.ts),
 * elsewhere (the bench's machine probe) on libuv's thread pool. The parameters
 * are stored with each hash, so changing the cost later keeps old hashes
 * verifiable: each keeps its own cost until its password changes.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { AuthConfig } from '../config.js';

const KEY_LENGTH = 32;

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/** One key to derive: what node:crypto's scrypt takes. */
export interface ScryptJob {
  password: string;
  salt: Buffer;
  keyLength: number;
  options: ScryptParams & { maxmem: number };
}

export type DeriveKey = (job: ScryptJob) => Promise<Buffer>;

export const deriveOnLibuv: DeriveKey = (job) =>
  new Promise((resolve, reject) => {
    scrypt(job.password, job.salt, job.keyLength, job.options, (err, key) => (err ? reject(err) : resolve(key)));
  });

function scryptJob(password: string, salt: Buffer, { N, r, p }: ScryptParams): ScryptJob {
  // maxmem must exceed 128 * N * r bytes (16 MiB at the default cost, 128 MiB at N=2^17).
  return { password: password.normalize('NFKC'), salt, keyLength: KEY_LENGTH, options: { N, r, p, maxmem: 256 * N * r + 1024 * 1024 } };
}

/** The configured scrypt cost. */
export function scryptParams(auth: Pick<AuthConfig, 'scryptN' | 'scryptR' | 'scryptP'>): ScryptParams {
  return { N: auth.scryptN, r: auth.scryptR, p: auth.scryptP };
}

export async function hashPassword(password: string, params: ScryptParams, derive: DeriveKey = deriveOnLibuv): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(scryptJob(password, salt, params));
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string, derive: DeriveKey = deriveOnLibuv): Promise<boolean> {
  const [scheme, N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(scryptJob(password, Buffer.from(salt, 'base64'), { N: Number(N), r: Number(r), p: Number(p) }));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
