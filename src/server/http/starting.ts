/**
 * What an instance answers while it starts: it listens before storage can
 * serve (see src/db/cassandra/startup-wait.ts), so an orchestrator's probes
 * and early clients get an answer that says what is going on instead of a
 * refused connection. `/health` (the process lives) answers 200; `/ready`
 * answers 503 with the reason the start waits; every other request is told to
 * retry (SERVICE_UNAVAILABLE, as during an outage), and WebSocket upgrades get
 * a 503 too.
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';
import { ErrorCode } from '../../errors.js';
import { Limits } from '../../limits.js';

/** Why the instance is not serving yet; the start updates it as it goes. */
export class StartupState {
  reason = 'starting';

  waitingFor(reason: string): void {
    this.reason = `starting: ${reason}`;
  }
}

const pathOf = (req: IncomingMessage) => (req.url ?? '/').split('?')[0];

/** The request listener of an instance that is starting. */
export function startingListener(state: StartupState): RequestListener {
  return (req, res) => {
    req.resume(); // whatever the body, it is not read
    const path = pathOf(req);
    if (path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"starting"}');
      return;
    }
    const retryAfter = String(Limits.unavailableRetryAfterSeconds);
    if (path === '/ready') {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': retryAfter });
      res.end(JSON.stringify({ ready: false, reason: state.reason }));
      return;
    }
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': retryAfter });
    res.end(
      JSON.stringify({
        errors: [
          {
            message: `Parley is starting and cannot serve yet (${state.reason}): retry shortly`,
            extensions: { code: ErrorCode.SERVICE_UNAVAILABLE, service: 'storage', retryAfter: Limits.unavailableRetryAfterSeconds },
          },
        ],
      }),
    );
  };
}

/** Answers a WebSocket upgrade made while the instance starts: 503, retry later. */
export function refuseUpgradeWhileStarting(_req: IncomingMessage, socket: Duplex): void {
  socket.end(`HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${Limits.unavailableRetryAfterSeconds}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
