/**
 * Keep-alive connections and a busy event loop: a request that reaches an idle kept-alive connection while the
 * server's event loop is held up past the connection's keep-alive timeout is answered, not dropped. The server is a
 * process of its own, stopped with SIGSTOP as a long pause would hold it (a GC, the driver rebuilding a returned
 * node's pools), while the client sends on the connection.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startAppProcess } from '../testkit/app-process.js';
import { eventually } from '../testkit/poll.js';

const KEEP_ALIVE_MS = 1_000;

/** One HTTP/1.1 request on `socket`, and the status line of its answer, or how the connection ended instead. */
function exchange(socket: Socket, send: () => void): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (end >= 0 && length && text.length >= end + 4 + Number(length)) finish(text.split('\r\n')[0]!);
    };
    const onClose = () => finish(`closed without an answer${text ? ` after ${JSON.stringify(text.slice(0, 40))}` : ''}`);
    const onError = (err: Error) => finish(`error: ${(err as NodeJS.ErrnoException).code ?? err.message}`);
    const finish = (result: string) => {
      socket.off('data', onData).off('close', onClose).off('error', onError);
      resolve(result);
    };
    socket.on('data', onData).on('close', onClose).on('error', onError);
    send();
  });
}

describe('a kept-alive connection while the event loop is held up', () => {
  it('answers a request that arrived during a pause longer than the keep-alive timeout', async () => {
    const server = await startAppProcess({ env: { HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS) } });
    const port = server.app.port;
    const body = JSON.stringify({ query: '{ __typename }' });
    const request = `POST /graphql HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`;
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    try {
      expect(await exchange(socket, () => socket.write(request))).toBe('HTTP/1.1 200 OK');
      // The server pauses at once, with the connection idle; the client's next request reaches it while paused.
      const pid = server.pids[0]!;
      process.kill(pid, 'SIGSTOP');
      const pausedAt = Date.now();
      let answer: Promise<string>;
      try {
        answer = exchange(socket, () => socket.write(request));
        // Paused for twice the keep-alive timeout (the pause is the fault: its length is the point).
        await eventually(() => Date.now() - pausedAt >= 2 * KEEP_ALIVE_MS, { what: 'the pause', intervalMs: 50 });
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      expect(await answer).toBe('HTTP/1.1 200 OK');
      // An idle connection is still closed after the timeout.
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await closed;
    } finally {
      socket.destroy();
      await server.stop();
    }
  }, 60_000);
});
