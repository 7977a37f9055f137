/**
 * How many live connections (WebSockets and SSE streams) each client address
 * holds open on this instance, so one address cannot hold every connection
 * (and the memory and subscriptions they carry) of an instance. Checked when a
 * connection is about to open and counted once it has: connections that open
 * at the same moment may pass the cap by the few in flight, never by more.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import { AppError, RateLimitReason, rateLimited } from '../../errors.js';
import { clientAddress } from '../http/client-address.js';

/** What ends a connection: a WebSocket, or an SSE stream's response; each says 'close' once. */
interface Closable {
  once(event: 'close', listener: () => void): unknown;
}

export class LiveConnectionsPerAddress {
  private readonly open = new Map<string, number>();

  constructor(readonly max: number) {}

  full(address: string): boolean {
    return (this.open.get(address) ?? 0) >= this.max;
  }

  opened(connection: Closable, address: string): void {
    this.open.set(address, (this.open.get(address) ?? 0) + 1);
    connection.once('close', () => {
      const left = (this.open.get(address) ?? 1) - 1;
      if (left > 0) this.open.set(address, left);
      else this.open.delete(address);
    });
  }

  /** What a refused SSE request is told (a WebSocket upgrade gets a bare 429). */
  refusal(): AppError {
    return rateLimited(RateLimitReason.LIVE_CONNECTIONS, `At most ${this.max} live connections (WebSockets and event streams) per address: close one first`, 1, {
      http: { status: 429, headers: { 'retry-after': '1' } },
    });
  }
}

/** SSE requests count against their address's live connections until their response closes. */
export function useEventStreamsPerAddress(live: LiveConnectionsPerAddress, trustProxy: boolean): YogaPlugin {
  return {
    onRequestParse({ request, serverContext }) {
      if (!request.headers.get('accept')?.includes('text/event-stream')) return;
      const { req, res } = serverContext as { req?: IncomingMessage; res?: ServerResponse };
      if (!req || !res) return;
      const address = clientAddress(req, trustProxy);
      if (live.full(address)) throw live.refusal();
      live.opened(res, address);
    },
  };
}
