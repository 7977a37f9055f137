/**
 * JWT sessions with jose. The algorithm is pinned (HS256 with a shared secret,
 * or EdDSA with a key pair) and exp, iat, iss, aud and jti are all required.
 */
import { SettingError } from '../config.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { importPKCS8, importSPKI, jwtVerify, SignJWT, type CryptoKey, type JWTPayload, type KeyObject } from 'jose';
import type { AuthConfig } from '../config.js';
import { isPossibleLogin } from '../validation.js';
import { VerifiedTokens } from './verified-tokens.js';

export interface Session {
  login: string;
  jti: string;
  expiresAt: Date;
}

type Key = CryptoKey | KeyObject | Uint8Array;

/** Clock skew tolerated when checking exp/iat; a revocation must outlive the token by as much. */
export const CLOCK_TOLERANCE_SECONDS = 5;

/** The last moment a token expiring at `expiresAt` is accepted: what its revocation, or its record, must outlive. */
export const acceptedUntil = (expiresAt: Date): Date => new Date(expiresAt.getTime() + CLOCK_TOLERANCE_SECONDS * 1000);

export class TokenService {
  private readonly verified = new VerifiedTokens<Session>(CLOCK_TOLERANCE_SECONDS * 1000);

  private constructor(
    private readonly config: AuthConfig,
    private readonly alg: 'HS256' | 'EdDSA',
    private readonly signKey: Key,
    private readonly verifyKey: Key,
  ) {}

  static async create(config: AuthConfig, production: boolean): Promise<TokenService> {
    if (config.jwtPrivateKey && config.jwtPublicKey) {
      const privateKey = await importPKCS8(config.jwtPrivateKey, 'EdDSA');
      const publicKey = await importSPKI(config.jwtPublicKey, 'EdDSA');
      return new TokenService(config, 'EdDSA', privateKey, publicKey);
    }
    const secret = config.jwtSecret ?? (production ? undefined : devSecret(config.devSecretFile));
    if (!secret) throw new SettingError('JWT_SECRET (at least 32 bytes) or JWT_PRIVATE_KEY/JWT_PUBLIC_KEY must be set in production');
    const key = new TextEncoder().encode(secret);
    if (key.length < 32) throw new SettingError('JWT_SECRET must be at least 256 bits (32 bytes)');
    return new TokenService(config, 'HS256', key, key);
  }

  async issue(login: string): Promise<{ token: string; session: Session }> {
    const jti = randomUUID();
    const now = Math.floor(Date.now() / 1000);
    const exp = now + this.config.tokenTtlSeconds;
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: this.alg, typ: 'JWT' })
      .setSubject(login)
      .setIssuer(this.config.issuer)
      .setAudience(this.config.audience)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .setJti(jti)
      .sign(this.signKey);
    return { token, session: { login, jti, expiresAt: new Date(exp * 1000) } };
  }

  /**
   * A short-lived link to one resource (an attachment) for one user, signed as sessions are but for an audience of
   * its own: a link is never a session, and a session never a link.
   */
  async issueLink(login: string, resource: string, ttlSeconds: number): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ res: resource })
      .setProtectedHeader({ alg: this.alg, typ: 'JWT' })
      .setSubject(login)
      .setIssuer(this.config.issuer)
      .setAudience(`${this.config.audience}/links`)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(this.signKey);
  }

  /** The user and the resource a link was issued for; throws for any other token, or once it has expired. */
  async verifyLink(token: string): Promise<{ login: string; resource: string }> {
    const { payload } = await jwtVerify(token, this.verifyKey, {
      algorithms: [this.alg],
      issuer: this.config.issuer,
      audience: `${this.config.audience}/links`,
      requiredClaims: ['exp', 'sub'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    });
    if (typeof payload.res !== 'string' || typeof payload.sub !== 'string' || !isPossibleLogin(payload.sub)) throw new Error('not a link');
    return { login: payload.sub, resource: payload.res };
  }

  /**
   * Throws on any invalid token: bad signature, wrong algorithm, expired,
   * missing claims. A token verified before is served from memory until it
   * expires (an HMAC or Ed25519 check per request is a measurable share of a
   * small query's CPU).
   */
  async verify(token: string): Promise<Session> {
    const known = this.verified.get(token, Date.now());
    if (known) return known;
    // Frozen: one session object now serves every request that carries the token.
    const session = Object.freeze(await this.verifySignatureAndClaims(token));
    this.verified.remember(token, session);
    return session;
  }

  private async verifySignatureAndClaims(token: string): Promise<Session> {
    const { payload } = await jwtVerify(token, this.verifyKey, {
      algorithms: [this.alg],
      issuer: this.config.issuer,
      audience: this.config.audience,
      requiredClaims: ['exp', 'iat', 'jti', 'sub'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    });
    return checkedClaims(payload, this.config.tokenTtlSeconds);
  }
}

/** A jti as issue() makes them (a UUID), or any short plain id: never an object, never huge. */
const JTI = /^[A-Za-z0-9-]{1,64}$/;

/**
 * Claims are input, even signed ones: a key holder's mistake (or a leaked key)
 * must not reach storage as `jti: {"$ne": 1}` or live forever as `exp: 1e20`.
 * jose checks that exp and iat are numbers; this checks what they may be.
 */
function checkedClaims(payload: JWTPayload, ttlSeconds: number): Session {
  const { sub, jti, exp, iat } = payload;
  const now = Math.floor(Date.now() / 1000);
  if (typeof sub !== 'string' || !isPossibleLogin(sub)) throw new Error('token subject is not a login');
  if (typeof jti !== 'string' || !JTI.test(jti)) throw new Error('token id is malformed');
  if (!Number.isSafeInteger(iat) || iat! > now + CLOCK_TOLERANCE_SECONDS) throw new Error('token issued in the future');
  if (!Number.isSafeInteger(exp) || exp! <= iat! || exp! - iat! > ttlSeconds + CLOCK_TOLERANCE_SECONDS) {
    throw new Error('token lifetime is longer than this server issues');
  }
  return { login: sub, jti, expiresAt: new Date(exp! * 1000) };
}

/** Development only: a generated secret kept in a git-ignored file so restarts keep sessions. */
function devSecret(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(48).toString('base64url');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}
