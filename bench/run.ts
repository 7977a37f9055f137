/**
 * `npm run bench [name...]`: runs bench/*.bench.ts (or the named ones) against
 * a real app on the local Cassandra node and writes each result to
 * bench/results/<name>.md. Timings live here, never in tests. It runs compiled
 * (dist/bench/run.js, after tsc -p tsconfig.bench.json), as production runs
 * dist/src/main.js: no TypeScript loader in any contender.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { projectPath } from '../src/project-root.js';
import { benchedCommit, loginCost, scryptProbeMs } from './machine-speed.js';

export interface BenchModule {
  /** Returns the markdown body of the result file. */
  default: () => Promise<string>;
}

const dir = fileURLToPath(new URL('.', import.meta.url));
const resultsDir = projectPath('bench', 'results');
const wanted = process.argv.slice(2);
const BENCH = /\.bench\.[jt]s$/;
const files = readdirSync(dir)
  .filter((f) => BENCH.test(f))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(BENCH, '')));

for (const file of files) {
  const name = file.replace(BENCH, '');
  console.log(`# ${name}`);
  const mod = (await import(`./${file}`)) as BenchModule;
  const began = new Date().toISOString();
  const speedBefore = await scryptProbeMs();
  const body = await mod.default();
  const speedAfter = await scryptProbeMs();
  const header =
    `# ${name}\n\nRun: ${began} on ${process.platform}/${process.arch}, Node ${process.version}, commit ${benchedCommit()}.\n` +
    `Machine speed: one scrypt at the login cost (${loginCost()}) took ${speedBefore.toFixed(0)} ms before this scenario and ${speedAfter.toFixed(0)} ms after it.\n\n`;
  writeFileSync(`${resultsDir}/${name}.md`, header + body + '\n');
  console.log(body);
}
process.exit(0);
