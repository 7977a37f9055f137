/**
 * Password hashing with scrypt from node:crypto, at a cost from OWASP's
 * password storage cheat sheet (src/config.ts). The async scrypt runs on
 * libuv's thread pool, so hashing never blocks the event loop. The parameters
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

function derive(password: string, salt: Buffer, { N, r, p }: ScryptParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem must exceed 128 * N * r bytes (16 MiB at the default cost, 128 MiB at N=2^17).
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** The configured scrypt cost. */
export function scryptParams(auth: Pick<AuthConfig, 'scryptN' | 'scryptR' | 'scryptP'>): ScryptParams {
  return { N: auth.scryptN, r: auth.scryptR, p: auth.scryptP };
}

export async function hashPassword(password: string, params: ScryptParams): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(N), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
