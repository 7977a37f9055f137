/** Who a request's bearer token says it is, or why the token is refused. */
import { AppError, ErrorCode } from '../errors.js';
import type { RevocationList } from './revocation-list.js';
import type { Session, TokenService } from './tokens.js';

/**
 * Why a token was refused, in `extensions.reason` of the UNAUTHENTICATED
 * error: an expired token is refreshed (log in again) and the request
 * retried, an invalid or revoked one means the session is over.
 */
export const TokenRefusal = {
  EXPIRED: 'TOKEN_EXPIRED',
  REVOKED: 'TOKEN_REVOKED',
  INVALID: 'TOKEN_INVALID',
} as const;
export type TokenRefusal = (typeof TokenRefusal)[keyof typeof TokenRefusal];

/** "Bearer abc" → "abc"; also accepts a bare token (WebSocket connectionParams). */
export function bearerToken(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const match = /^Bearer\s+(.+)$/i.exec(value.trim());
  return (match ? match[1] : value).trim();
}

/**
 * No token: anonymous (null). A token that is malformed, badly signed,
 * expired or revoked is refused outright rather than treated as anonymous,
 * so a client learns its session is gone.
 */
export async function authenticate(services: { tokens: TokenService; revocations: RevocationList }, token: string | null): Promise<Session | null> {
  if (!token) return null;
  let session: Session;
  try {
    session = await services.tokens.verify(token);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_JWT_EXPIRED') {
      throw new AppError(ErrorCode.UNAUTHENTICATED, 'Token expired: log in again', { reason: TokenRefusal.EXPIRED });
    }
    throw new AppError(ErrorCode.UNAUTHENTICATED, 'Invalid token', { reason: TokenRefusal.INVALID });
  }
  if (await services.revocations.check(session)) {
    throw revokedToken();
  }
  return session;
}

export const revokedToken = () =>
  new AppError(ErrorCode.UNAUTHENTICATED, 'This token was revoked (logged out)', { reason: TokenRefusal.REVOKED });

export function refusalOf(err: unknown): TokenRefusal | undefined {
  return (err as { extensions?: { reason?: TokenRefusal } }).extensions?.reason;
}
