/**
 * `npm run bench [name...]`: runs bench/*.bench.ts (or the named ones) against
 * a real app on the local Cassandra node and writes each result to
 * bench/results/<name>.md. Timings live here, never in tests.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface BenchModule {
  /** Returns the markdown body of the result file. */
  default: () => Promise<string>;
}

const dir = fileURLToPath(new URL('.', import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace('.bench.ts', '')));

for (const file of files) {
  const name = file.replace('.bench.ts', '');
  console.log(`# ${name}`);
  const mod = (await import(`./${file}`)) as BenchModule;
  const body = await mod.default();
  const header = `# ${name}\n\nRun: ${new Date().toISOString()} on ${process.platform}/${process.arch}, Node ${process.version}\n\n`;
  writeFileSync(`${dir}/results/${name}.md`, header + body + '\n');
  console.log(body);
}
process.exit(0);
