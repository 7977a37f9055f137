/**
 * Closes each WebSocket when a token it authenticated with is revoked on any instance or expires: no socket
 * outlives its token. One expiry timer per token, however many sockets carry it.
 */
import type { WebSocket } from 'ws';
import type { Session } from '../../auth/tokens.js';
import type { RevocationList } from '../../auth/revocation-list.js';
import { atTime } from '../../at-time.js';

/** How a watched socket is closed, by why. */
export interface TokenEnded {
  revoked(socket: WebSocket): void;
  expired(socket: WebSocket): void;
}

/** The tokens (by jti) a socket is watched for: one, or a few (each operation may bring its own). */
export interface WatchedSocket {
  socket: WebSocket;
  watchedJtis: string[];
}

export class TokenWatch {
  /** The open sockets of each watched token, and its expiry timer. */
  private readonly byJti = new Map<string, { sockets: Set<WebSocket>; stopTimer: () => void }>();
  private readonly stopListening: () => void;

  constructor(
    revocations: Pick<RevocationList, 'onRevoke'>,
    private readonly ended: TokenEnded,
  ) {
    this.stopListening = revocations.onRevoke((jti) => {
      for (const socket of this.byJti.get(jti)?.sockets ?? []) this.ended.revoked(socket);
    });
  }

  /** Watches `session`'s token for the socket, once. */
  watch(watched: WatchedSocket, session: Session): void {
    if (watched.watchedJtis.includes(session.jti)) return;
    watched.watchedJtis.push(session.jti);
    const entry = this.byJti.get(session.jti);
    if (entry) {
      entry.sockets.add(watched.socket);
      return;
    }
    const sockets = new Set([watched.socket]);
    // Registered before the timer is armed: a token already expired closes the socket at once.
    const added = { sockets, stopTimer: () => {} };
    this.byJti.set(session.jti, added);
    added.stopTimer = atTime(session.expiresAt, () => {
      for (const socket of sockets) this.ended.expired(socket);
    });
  }

  /** A closed socket leaves its tokens' sets; a token no open socket carries is no longer watched. */
  forget(watched: WatchedSocket): void {
    for (const jti of watched.watchedJtis) {
      const entry = this.byJti.get(jti);
      if (!entry?.sockets.delete(watched.socket) || entry.sockets.size > 0) continue;
      entry.stopTimer();
      this.byJti.delete(jti);
    }
  }

  /** Stops hearing of revocations (the sockets are closed by their server). */
  stop(): void {
    this.stopListening();
  }
}
