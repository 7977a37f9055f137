/**
 * Idle kept-alive HTTP connections are closed after their timeout, but never one whose next request has already
 * arrived.
 *
 * Node's server closes an idle connection from a timer. Each turn of the event loop runs due timers before it
 * reads sockets, so after a pause longer than the timeout (a long GC, the Cassandra driver rebuilding the pools of
 * a node that came back) the timer fires before the request that came in during the pause is read, and the
 * client's request is reset unanswered. Closing one turn later lets that request be read first: it is then
 * served, and the connection is idle again only after its answer.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export function keepAliveConnections(server: Server, timeoutMs: number): void {
  server.keepAliveTimeout = timeoutMs;
  // With a listener, the server leaves a timed-out connection to it instead of destroying it at once.
  server.on('timeout', (socket: Socket) => {
    const read = socket.bytesRead;
    setImmediate(() => {
      if (socket.bytesRead === read) socket.destroy();
    });
  });
}
