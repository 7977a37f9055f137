/**
 * Typed documents: `npm run codegen` reads schema.graphql and the operations
 * of the tests (test/operations/*.graphql, into test/generated/) and of the
 * reference web client (the graphql() calls of examples/web-chat/src/, into
 * examples/web-chat/src/gql/), writing for each the typed documents and
 * persisted-documents.json, the trusted-documents manifest a client
 * ships to the server (TRUSTED_DOCUMENTS_FILE): ids are "sha256:<hex of the
 * printed document>", as in GraphQL over HTTP's persisted documents appendix.
 * A test fails when the generated files are stale.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

/** The client preset as both clients use it; the web client keeps __typename, which its feed switches on. */
const clientPreset = (documents: string[], skipTypename: boolean) => ({
  documents,
  preset: 'client' as const,
  presetConfig: { fragmentMasking: false, gqlTagName: 'graphql', persistedDocuments: { hashAlgorithm: 'sha256' } },
  config: {
    scalars: { DateTime: 'string', ID: 'string', Decimal: 'string' },
    enumsAsTypes: true,
    useTypeImports: true,
    skipTypename,
  },
});

const config: CodegenConfig = {
  schema: 'schema.graphql',
  ignoreNoDocuments: false,
  emitLegacyCommonJSImports: false,
  generates: {
    'examples/web-chat/src/gql/': clientPreset(['examples/web-chat/src/**/*.{ts,tsx}', '!examples/web-chat/src/gql/**'], false),
    'test/generated/': clientPreset(['test/operations/**/*.graphql'], true),
  },
};

export default config;
