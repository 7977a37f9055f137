/**
 * `npm run example`: builds the reference web client and serves it beside a
 * Parley instance. The instance runs trusted documents only, from the
 * client's own manifest (src/gql/persisted-documents.json), and allows the
 * page's origin: the page is on http://localhost:5173 (WEB_PORT), the API on
 * http://localhost:4000/graphql (PORT). Cassandra must be up, as for
 * `npm start` (`npm run cassandra -- start`).
 */
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const WEB_CHAT_DIR = fileURLToPath(new URL('.', import.meta.url));
export const MANIFEST = join(WEB_CHAT_DIR, 'src', 'gql', 'persisted-documents.json');
const DIST = join(WEB_CHAT_DIR, 'dist');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Builds the client into dist/ with vite, in a process of its own: a
 * production build needs NODE_ENV=production throughout (React and its JSX
 * transform pick their build from it), whatever the caller runs under.
 */
export async function buildWebChat(): Promise<void> {
  const vite = join(WEB_CHAT_DIR, '..', '..', 'node_modules', 'vite', 'bin', 'vite.js');
  await run(process.execPath, [vite, 'build', '--config', join(WEB_CHAT_DIR, 'vite.config.ts')], { env: { ...process.env, NODE_ENV: 'production' } });
}

export interface WebChatServer {
  url: string;
  close(): Promise<void>;
}

/** Serves dist/ on `port` (0: any free one), and /config.json telling the page where the API is. */
export async function serveWebChat(apiUrl: string, port: number, host = '127.0.0.1'): Promise<WebChatServer> {
  const config = JSON.stringify({ api: apiUrl });
  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/config.json') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      return res.end(config);
    }
    // Only files under dist/: a path that climbs out of it is answered like a missing file.
    const file = normalize(join(DIST, path === '/' ? 'index.html' : path));
    if (!file.startsWith(DIST)) return void res.writeHead(404).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://${host === '0.0.0.0' ? 'localhost' : host}:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { createApp } = await import('../../src/app.js');
  const { loadConfig } = await import('../../src/config.js');
  const { createLogger } = await import('../../src/observability/logging.js');
  const webPort = Number(process.env.WEB_PORT ?? 5173);
  const origins = [`http://localhost:${webPort}`, `http://127.0.0.1:${webPort}`];
  const config = loadConfig({
    ...process.env,
    TRUSTED_DOCUMENTS: 'only',
    TRUSTED_DOCUMENTS_FILE: MANIFEST,
    CORS_ORIGINS: [process.env.CORS_ORIGINS, ...origins].filter(Boolean).join(','),
  });
  await buildWebChat();
  const app = createApp({ config, logger: createLogger(config) });
  await app.start();
  const web = await serveWebChat(`${app.url}/graphql`, webPort, 'localhost');
  console.log(`Parley's web chat: ${web.url} (API ${app.url}/graphql)`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, async () => {
      await web.close();
      await app.stop();
      process.exit(0);
    });
  }
}
