/**
 * That the architecture doc describes the code as it is: every table a cql/ file
 * creates, and every folder of src/, is named in docs/architecture.md, and every
 * folder of src/ in README.md's layout too. Source text only, no database.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

const doc = read('docs/architecture.md');
const readme = read('README.md');

/** Every table created by a cql/*.cql file (`CREATE TABLE [IF NOT EXISTS] [keyspace.]name`), comments aside. */
function createdTables(): string[] {
  const tables = readdirSync(join(ROOT, 'cql'))
    .filter((name) => name.endsWith('.cql'))
    .flatMap((name) => {
      const cql = read(join('cql', name)).replace(/--.*$|\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');
      return [...cql.matchAll(/\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:"?\w+"?\.)?"?(\w+)"?/gi)].map((m) => m[1]!.toLowerCase());
    });
  return [...new Set(tables)].sort();
}

/** Every folder under src/, at any depth, as a path from the repository's root ("src/db/rooms/messages"). */
function srcFolders(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isDirectory())
    .flatMap((path) => [relative(ROOT, path).split('\\').join('/'), ...srcFolders(path)])
    .sort();
}

const inBackticks = (text: string, name: string) => text.includes(`\`${name}\``) || text.includes(`\`${name}/\``);
/** The folder as a path of its own, not as the start of a deeper one ("src/db/rooms" is not named by "src/db/rooms/messages"). */
const namesFolder = (text: string, folder: string) =>
  new RegExp(`(?<![\\w/.-])${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/?(?![\\w/.-])`).test(text);

describe('docs/architecture.md', () => {
  const tables = createdTables();
  const folders = srcFolders();

  it('finds the tables and folders it checks', () => {
    expect(tables).toContain('users');
    expect(folders).toContain('src/db/rooms/messages');
  });

  it('names in backticks every table a cql/ file creates', () => {
    expect(tables.filter((table) => !inBackticks(doc, table))).toEqual([]);
  });

  it('names in backticks every folder under src/', () => {
    expect(folders.filter((folder) => !inBackticks(doc, folder))).toEqual([]);
  });

  it("is matched by README.md's layout, which names every folder under src/", () => {
    expect(folders.filter((folder) => !namesFolder(readme, folder))).toEqual([]);
  });
});
