/** `npm run schema:print` writes schema.graphql; a test fails when it is stale. */
import { writeFileSync } from 'node:fs';
import { printSchema, lexicographicSortSchema } from 'graphql';
import { schema } from './index.js';
import { projectPath } from '../project-root.js';

export const printedSchema = () => `${printSchema(lexicographicSortSchema(schema))}\n`;

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(projectPath('schema.graphql'), printedSchema());
  console.log('wrote schema.graphql');
}
