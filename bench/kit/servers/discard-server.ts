/**
 * A server that reads each request's body and drops it, then answers its
 * length: the floor of sending a body over HTTP, for `npm run bench
 * attachments` (what an upload costs before anything is stored). Started in a
 * process of its own by startDiscardServer; run directly, it serves.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { announceChild, startChildServer, type ServerProcess } from './server-process.js';

export function startDiscardServer(): Promise<ServerProcess> {
  return startChildServer(fileURLToPath(import.meta.url), { PARLEY_DISCARD_CHILD: '1' });
}

if (process.env.PARLEY_DISCARD_CHILD) {
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.byteLength));
    req.on('end', () => res.end(JSON.stringify({ bytes })));
  });
  server.listen(0, '127.0.0.1', () => {
    void announceChild(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => new Promise<void>((resolve) => server.close(() => resolve())));
  });
}
