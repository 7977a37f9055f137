/**
 * Sessions: the tokens an account was issued. Each is recorded with the
 * account (user_sessions, cql/013) before its token is handed out, so a
 * password change or logoutEverywhere can end them all: revoked on every
 * server (src/auth/revocation-list.ts), their WebSockets closed. A request
 * never reads this record: a token is checked against the revocation list.
 */
import type { Services } from '../services.js';
import { acceptedUntil, type Session } from '../../auth/tokens.js';
import type { StoredSession } from '../../db/accounts/sessions.js';
import { eachAtOnce } from '../shared/each-at-once.js';
import { isStorageUnavailable } from '../../db/cassandra/client.js';

/** Sessions revoked at once by endSessions (each is a write and an announcement). */
const END_AT_ONCE = 32;

/** A new session of `login`, recorded before its token leaves the server. */
export async function startSession(services: Services, login: string): Promise<{ token: string; session: Session }> {
  const issued = await services.tokens.issue(login);
  const { jti, expiresAt } = issued.session;
  await services.stores.sessions.add(login, { jti, expiresAt }, acceptedUntil(expiresAt));
  return issued;
}

/**
 * Ends `sessions` of `login` on every server: each revoked (stored, then
 * announced), then its record dropped. Running it again is harmless, so a
 * call that failed midway is finished by the same call again. Once revoked, a
 * session is over: a record storage did not drop is left to expire with it
 * (a later end revokes it again, harmlessly), rather than fail a logout whose
 * token could not send it again.
 */
export async function endSessions(services: Services, login: string, sessions: StoredSession[]): Promise<number> {
  await eachAtOnce(sessions, END_AT_ONCE, async ({ jti, expiresAt }) => {
    await services.revocations.revoke(jti, expiresAt);
    await services.stores.sessions.remove(login, jti).catch((err: unknown) => {
      if (!isStorageUnavailable(err)) throw err;
      services.logger.warn({ err, jti }, 'session revoked, its record left to expire');
    });
  });
  return sessions.length;
}
