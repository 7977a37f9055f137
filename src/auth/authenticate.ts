import { AppError, ErrorCode } from '../errors.js';
import type { Services } from '../services.js';
import type { Session } from './tokens.js';

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
export async function authenticate(services: Services, token: string | null): Promise<Session | null> {
  if (!token) return null;
  let session: Session;
  try {
    session = await services.tokens.verify(token);
  } catch {
    throw new AppError(ErrorCode.UNAUTHENTICATED, 'Invalid or expired token');
  }
  if (services.revocations.isRevoked(session.jti)) {
    throw new AppError(ErrorCode.UNAUTHENTICATED, 'This token was revoked (logged out)');
  }
  return session;
}
