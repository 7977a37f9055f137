/**
 * Trusted documents: clients send the id of a document from a manifest that
 * was shipped with them (GraphQL Code Generator's client preset writes it as
 * persisted-documents.json: { "sha256:<hex>": "<document>" }) instead of its
 * text. With TRUSTED_DOCUMENTS=only, nothing else runs, so a production
 * server executes exactly the operations its own frontends were built with.
 *
 * The id is read from `documentId` (GraphQL over HTTP) or from
 * `extensions.persistedQuery.sha256Hash` (Apollo's convention, hex without
 * the "sha256:" prefix), over HTTP and graphql-ws alike.
 */
import { SettingError } from '../../config.js';
import { readFileSync } from 'node:fs';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import type { TrustedDocumentsConfig } from '../../config.js';
import { AppError, ErrorCode } from '../../errors.js';

interface OperationParams {
  query?: unknown;
  documentId?: unknown;
  extensions?: unknown;
}

export class TrustedDocuments {
  private constructor(
    private readonly mode: TrustedDocumentsConfig['mode'],
    private readonly documents: ReadonlyMap<string, string>,
  ) {}

  static load(config: TrustedDocumentsConfig): TrustedDocuments {
    if (config.mode === 'only' && config.files.length === 0) {
      throw new SettingError('TRUSTED_DOCUMENTS=only needs TRUSTED_DOCUMENTS_FILE (the client preset\'s persisted-documents.json)');
    }
    const documents = new Map<string, string>();
    for (const file of config.files) {
      let manifest: unknown;
      try {
        manifest = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        throw new SettingError(`TRUSTED_DOCUMENTS_FILE: ${file} cannot be read as JSON (${(err as Error).message})`);
      }
      if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) {
        throw new SettingError(`TRUSTED_DOCUMENTS_FILE: ${file} is not a JSON object of id → document`);
      }
      for (const [id, document] of Object.entries(manifest)) {
        if (typeof document !== 'string') throw new SettingError(`TRUSTED_DOCUMENTS_FILE: ${file}: the document of ${id} is not a string`);
        documents.set(id, document);
      }
    }
    return new TrustedDocuments(config.mode, documents);
  }

  get size(): number {
    return this.documents.size;
  }

  /**
   * The document text to run for these parameters. Throws TRUSTED_DOCUMENT_NOT_FOUND
   * for an id no manifest has, and TRUSTED_DOCUMENTS_ONLY for text in `only` mode.
   * Undefined leaves the parameters as they are (text in `any` mode, or nothing at all).
   */
  resolve(params: OperationParams): string | undefined {
    const id = documentIdOf(params);
    if (id !== undefined) {
      const document = this.documents.get(id);
      if (document === undefined) {
        throw new AppError(ErrorCode.TRUSTED_DOCUMENT_NOT_FOUND, 'No trusted document has this id', { http: { status: 400 } });
      }
      return document;
    }
    if (this.mode === 'only') {
      throw new AppError(ErrorCode.TRUSTED_DOCUMENTS_ONLY, 'This server runs trusted documents only: send a documentId', {
        http: { status: 400 },
      });
    }
    return undefined;
  }
}

function documentIdOf(params: OperationParams): string | undefined {
  if (typeof params.documentId === 'string' && params.documentId !== '') return params.documentId;
  const persisted = (params.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery;
  if (typeof persisted?.sha256Hash === 'string') return `sha256:${persisted.sha256Hash}`;
  return undefined;
}

/** Over HTTP: the id becomes the query before Yoga checks the parameters. */
export function useTrustedDocuments(trusted: TrustedDocuments): YogaPlugin {
  return {
    onParams: ({ params, setParams }) => {
      const document = trusted.resolve(params as OperationParams);
      if (document === undefined) return;
      const { documentId: _id, ...rest } = params as typeof params & { documentId?: unknown };
      setParams({ ...rest, query: document, extensions: withoutPersistedQuery(params.extensions) });
    },
  };
}

function withoutPersistedQuery(extensions: Record<string, unknown> | undefined) {
  if (!extensions || !('persistedQuery' in extensions)) return extensions;
  const { persistedQuery: _pq, ...rest } = extensions;
  return rest;
}
