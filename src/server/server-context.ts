import type { IncomingMessage } from 'node:http';
import type { Session } from '../auth/tokens.js';

/** What the HTTP adapter or our WebSocket bridge hands Yoga for each operation. */
export interface ServerContext {
  /** The HTTP request; absent for WebSocket operations (the upgrade request is not kept: see `ws`). */
  req?: IncomingMessage;
  /** Set for WebSocket operations: authenticated at connection time, or by the operation's own headers. */
  ws?: { session: Session | null; requestId: string; clientAddress: string };
}

/** Largest HTTP body or WebSocket message accepted: far above any real operation, far below a memory problem. */
export const MAX_REQUEST_BYTES = 1024 * 1024;
