/**
 * Trusted documents: with TRUSTED_DOCUMENTS=only, a server runs the documents
 * of its clients' manifest (the codegen client preset's
 * persisted-documents.json), by id, and nothing else; by default any document runs.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { MeDocument, RegisterDocument } from '../generated/graphql.js';
import { startApp, stopApp } from '../testkit/app.js';
import { cqlRow } from '../testkit/cql.js';
import { gql } from '../testkit/http.js';
import { signUp, uniqueLogin } from '../testkit/data/users.js';
import { wsClient } from '../testkit/ws.js';
import { runAppProcessToExit } from '../testkit/app-process.js';

const MANIFEST = fileURLToPath(new URL('../generated/persisted-documents.json', import.meta.url));
/** The id the client preset embedded in the typed document: "sha256:<hex>". */
const ME_ID = (MeDocument as unknown as { __meta__: { hash: string } }).__meta__.hash;

async function postBody(app: App, body: unknown, token?: string) {
  const res = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: Array<{ extensions?: { code?: string } }> } };
}

function overWs(app: App, payload: Record<string, unknown>, token?: string) {
  const client = wsClient(app, token);
  return new Promise<unknown>((resolve) => {
    let result: unknown;
    client.subscribe(payload as { query: string }, {
      next: (v) => (result = v),
      error: (e) => resolve({ errors: e }),
      complete: () => resolve(result),
    });
  }).finally(() => client.dispose());
}

describe('TRUSTED_DOCUMENTS=only', () => {
  it('runs a known document by id over HTTP and graphql-ws, and refuses the rest with stable codes', async () => {
    const app = await startApp({ env: { NODE_ENV: 'production', TRUSTED_DOCUMENTS: 'only', TRUSTED_DOCUMENTS_FILE: MANIFEST } });
    // Sign-up's document is in the manifest too, but sent as text it is refused before it runs: no user is made.
    const login = uniqueLogin();
    const input = { login, password: 'correct horse battery', firstname: 'Test', lastname: login, email: `${login}@example.test` };
    expect(await gql(app, RegisterDocument, { input })).toEqual({
      status: 400,
      errors: [{ message: 'This server runs trusted documents only: send a documentId', extensions: { code: 'TRUSTED_DOCUMENTS_ONLY' } }],
    });
    expect(await cqlRow(app, 'SELECT login FROM users WHERE login = ?', [login])).toBeUndefined();

    const byId = await postBody(app, { documentId: ME_ID });
    expect(byId.body).toEqual({ data: { me: null } });
    const apolloStyle = await postBody(app, { extensions: { persistedQuery: { version: 1, sha256Hash: ME_ID.replace('sha256:', '') } } });
    expect(apolloStyle.body).toEqual({ data: { me: null } });

    const unknown = await postBody(app, { documentId: `sha256:${'0'.repeat(64)}` });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors?.[0]?.extensions?.code).toBe('TRUSTED_DOCUMENT_NOT_FOUND');
    const text = await postBody(app, { query: '{ __typename }' });
    expect(text.status).toBe(400);
    expect(text.body.errors?.[0]?.extensions?.code).toBe('TRUSTED_DOCUMENTS_ONLY');

    expect(await overWs(app, { query: '', documentId: ME_ID })).toEqual({ data: { me: null } });
    expect(await overWs(app, { query: '{ __typename }' })).toMatchObject({ errors: [{ extensions: { code: 'TRUSTED_DOCUMENTS_ONLY' } }] });
    expect(await overWs(app, { query: '', documentId: 'sha256:nope' })).toMatchObject({
      errors: [{ extensions: { code: 'TRUSTED_DOCUMENT_NOT_FOUND' } }],
    });
    await stopApp(app);
  });

  it('refuses to start without a manifest', async () => {
    await expect(startApp({ env: { TRUSTED_DOCUMENTS: 'only' } })).rejects.toThrow(/TRUSTED_DOCUMENTS_FILE/);
  });
});

describe('by default', () => {
  it('runs any document, and a known id when a manifest is configured', async () => {
    const app = await startApp({ env: { TRUSTED_DOCUMENTS_FILE: MANIFEST } });
    const user = await signUp(app);
    expect((await postBody(app, { query: '{ __typename }' })).body).toEqual({ data: { __typename: 'Query' } });
    expect((await postBody(app, { documentId: ME_ID }, user.token)).body).toMatchObject({ data: { me: { login: user.login } } });
    expect((await postBody(app, { documentId: 'sha256:unknown' })).body.errors?.[0]?.extensions?.code).toBe(
      'TRUSTED_DOCUMENT_NOT_FOUND',
    );
    await stopApp(app);
  });
});

describe('a trusted-documents setting the server cannot start with', () => {
  it('stops it with one line that names the setting, never a stack trace', async () => {
    for (const [env, said] of [
      [{ TRUSTED_DOCUMENTS: 'only' }, 'TRUSTED_DOCUMENTS=only needs TRUSTED_DOCUMENTS_FILE'],
      [{ TRUSTED_DOCUMENTS_FILE: '/nonexistent/persisted-documents.json' }, 'TRUSTED_DOCUMENTS_FILE: /nonexistent/persisted-documents.json cannot be read as JSON'],
    ] as const) {
      const { code, stderr } = await runAppProcessToExit(env);
      expect(code).toBe(1);
      expect(stderr.trim().split('\n')).toEqual([expect.stringContaining(`Parley cannot start: ${said}`)]);
    }
  });
});
