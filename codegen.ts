/**
 * Typed documents for the operations the tests send: `npm run codegen` reads
 * schema.graphql and test/operations/*.graphql and writes test/generated/.
 * A test fails when the generated file is stale.
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
      presetConfig: { fragmentMasking: false, gqlTagName: 'graphql' },
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
