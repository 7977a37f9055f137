import WebSocket, { type ClientOptions } from 'ws';
import type { App } from '../../src/app.js';

/** A graphql-ws socket to `app`, once open; or the HTTP status its upgrade was refused with. */
export function tryUpgrade(app: App, options: ClientOptions = {}): Promise<WebSocket | number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${app.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', options);
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('error', (err) => (err.message.includes('Unexpected server response') ? undefined : reject(err)));
  });
}
