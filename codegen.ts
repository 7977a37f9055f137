/**
 * Typed documents for the operations the tests send: `npm run codegen` reads
 * schema.graphql and test/operations/*.graphql and writes test/generated/,
 * including persisted-documents.json, the trusted-documents manifest a client
 * ships to the server (TRUSTED_DOCUMENTS_FILE): ids are "sha256:<hex of the
 * printed document>", as in GraphQL over HTTP's persisted documents appendix.
 * A test fails when the generated files are stale.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/operations/**/*.graphql'],
  ignoreNoDocuments: false,
  emitLegacyCommonJSImports: false,
  generates: {
    'test/generated/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false, gqlTagName: 'graphql', persistedDocuments: { hashAlgorithm: 'sha256' } },
      config: {
        scalars: { DateTime: 'string', ID: 'string', Decimal: 'string' },
        enumsAsTypes: true,
        useTypeImports: true,
        skipTypename: true,
      },
    },
  },
};

export default config;
