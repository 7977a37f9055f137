/**
 * How the client talks to Parley: queries and mutations over HTTP through
 * urql, and live feeds over one graphql-ws socket. Every operation goes by
 * its trusted-document id (the manifest codegen wrote), never by its text.
 *
 * A live feed resumes by itself: when the socket drops (the network went
 * away, the server restarted), each feed subscribes again, once the browser
 * is back online, from the cursor of the last event it took
 * (roomEvents(after:)), so nothing posted meanwhile is missed.
 */
import { Client, fetchExchange, type TypedDocumentNode } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { UploadAttachment } from './operations.js';

export interface Api {
  urql: Client;
  /** The API's origin: Attachment.url paths are on it. */
  origin: string;
  /** Uploads one file (a multipart request by document id) and answers its attachment id. */
  upload(file: File): Promise<{ id: string; filename: string }>;
  /** Runs `document` as a live feed until the returned function is called; see follow(). */
  follow<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: () => V, onData: (data: R) => void): () => void;
  close(): void;
}

/** The trusted-document id codegen gave a document ("sha256:<hex>"). */
const documentId = (document: unknown) => (document as { __meta__?: { hash?: string } }).__meta__?.hash ?? '';

export function createApi(httpUrl: string, token: string | null, onLive: (live: boolean) => void): Api {
  const urql = new Client({
    url: httpUrl,
    exchanges: [
      persistedExchange({
        enforcePersistedQueries: true,
        enableForMutation: true,
        preferGetForPersistedQueries: false,
        generateHash: async (_query, document) => documentId(document).replace(/^sha256:/, ''),
      }),
      fetchExchange,
    ],
    requestPolicy: 'cache-and-network',
    fetchOptions: (): RequestInit => ({ headers: token ? { authorization: `Bearer ${token}` } : {} }),
  });
  const ws: WsClient = createWsClient({
    url: httpUrl.replace(/^http/, 'ws'),
    connectionParams: (): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {}),
    lazy: true,
    // The feeds resubscribe themselves (below), each from its newest cursor, rather than replaying the first payload.
    retryAttempts: 0,
    on: { connected: () => onLive(true), closed: () => onLive(false) },
  });
  // The browser knows before the socket does: a dropped network ends the feeds now, and they come back with it.
  const offline = () => ws.terminate();
  window.addEventListener('offline', offline);

  function follow<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: () => V, onData: (data: R) => void) {
    let stopped = false;
    let unsubscribe: () => void = () => {};
    let retryMs = 500;
    const again = () => {
      if (stopped) return;
      if (!navigator.onLine) return window.addEventListener('online', again, { once: true });
      setTimeout(subscribe, retryMs);
      retryMs = Math.min(retryMs * 2, 10_000);
    };
    function subscribe() {
      if (stopped) return;
      // graphql-ws wants a query string in every subscribe message: the server runs the trusted document instead.
      unsubscribe = ws.subscribe<R>({ query: '', documentId: documentId(document), variables: variables() } as never, {
        next: (result) => {
          retryMs = 500;
          if (result.data) onData(result.data as R);
        },
        // A refusal (an array of GraphQL errors: FORBIDDEN, NOT_FOUND) ends the feed; a dropped socket resumes it.
        error: (err) => (Array.isArray(err) ? undefined : again()),
        complete: () => {},
      });
    }
    subscribe();
    return () => {
      stopped = true;
      unsubscribe();
    };
  }

  async function upload(file: File): Promise<{ id: string; filename: string }> {
    const form = new FormData();
    form.append('operations', JSON.stringify({ documentId: documentId(UploadAttachment), variables: { file: null } }));
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    form.append('0', file, file.name);
    const res = await fetch(httpUrl, {
      method: 'POST',
      // The preflight header: what tells the server this is no form posted from another site.
      headers: { 'x-graphql-yoga-csrf': '1', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: form,
    });
    const body = (await res.json()) as { data?: { uploadAttachment: { id: string; filename: string } }; errors?: Array<{ message: string }> };
    if (!body.data) throw new Error(body.errors?.[0]?.message ?? `upload failed (${res.status})`);
    return body.data.uploadAttachment;
  }

  return {
    urql,
    origin: new URL(httpUrl).origin,
    upload,
    follow,
    close() {
      window.removeEventListener('offline', offline);
      void ws.dispose();
    },
  };
}
