// Statement.writesList against the live schema: every INSERT in src/db names exactly the positions it binds to a
// list column. A list missed would let a retried write repeat its elements; a set or frozen value counted as a list
// would take the write's speculative and unlogged retries away (a post then waits out a stalled coordinator).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import cassandra from 'cassandra-driver';
import { afterAll, describe, expect, it, inject } from 'vitest';

const SRC_DB = join(import.meta.dirname, '../../src/db');

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourcesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
}

interface InsertStatement {
  file: string;
  table: string;
  columns: string[];
  writesList: number[];
}

/** A source with each `${NAME}` replaced by the string constant NAME it declares (shared column lists). */
function withConstantsInlined(text: string): string {
  const constants = new Map([...text.matchAll(/const (\w+) =\s*['`]([^'`$]*)['`];/g)].map(([, name, value]) => [name!, value!]));
  return text.replace(/\$\{(\w+)\}/g, (whole, name: string) => constants.get(name) ?? whole);
}

/** The cql(`INSERT INTO t (a, b) VALUES (?, ?)`, { ... }) calls of a source, with the writesList each declares. */
function insertsIn(file: string): InsertStatement[] {
  const text = withConstantsInlined(readFileSync(file, 'utf8'));
  const call = /cql\(\s*[`'"]\s*INSERT INTO (\w+)\s*\(([^)]*)\)\s*VALUES\s*\(([^)]*)\)[^`'"]*[`'"],\s*(?:\/\/[^\n]*\n\s*)*\{([^}]*)\}/g;
  return [...text.matchAll(call)].map(([, table, columns, , options]) => ({
    file,
    table: table!,
    columns: columns!.split(',').map((c) => c.trim()),
    writesList: (/writesList:\s*\[([^\]]*)\]/.exec(options!)?.[1] ?? '')
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean)
      .map(Number),
  }));
}

describe('list writes', () => {
  const client = new cassandra.Client({ contactPoints: [inject('cassandraContactPoint')], localDataCenter: 'datacenter1' });
  afterAll(() => client.shutdown());

  it('names, for each INSERT, exactly the positions bound to a list column', async () => {
    const inserts = sourcesUnder(SRC_DB).flatMap(insertsIn);
    const rows = (
      await client.execute('SELECT table_name, column_name, type FROM system_schema.columns WHERE keyspace_name = ?', [inject('keyspace')], {
        prepare: true,
      })
    ).rows;
    const typeOf = new Map(rows.map((r) => [`${r.table_name}.${r.column_name}`, r.type as string]));
    expect(inserts.length).toBeGreaterThan(30);
    // The message row binds one list (mentions) before a set (terms): both kinds are seen.
    expect(inserts.some((s) => s.columns.some((c) => typeOf.get(`${s.table}.${c}`)?.startsWith('set<')))).toBe(true);
    expect(inserts.filter((s) => s.writesList.length > 0).length).toBeGreaterThan(0);
    for (const insert of inserts) {
      const lists = insert.columns.flatMap((column, at) => {
        const type = typeOf.get(`${insert.table}.${column}`);
        expect(type, `${insert.file}: ${insert.table}.${column} in the schema`).toBeDefined();
        return type!.startsWith('list<') ? [at] : [];
      });
      expect(insert.writesList, `${insert.file}: INSERT INTO ${insert.table}'s list positions`).toEqual(lists);
    }
  });
});
