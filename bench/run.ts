/**
 * `npm run bench [name...]`: runs every scenario of bench/scenarios/ (any
 * *.bench.ts at any depth, named by its file name: live/fanout.bench.ts is
 * `fanout`), or the named ones, against a real app on the local Cassandra node
 * and writes each result to bench/results/<name>.md. `npm run bench -- --list`
 * prints each scenario's name and file without running any. Timings live here,
 * never in tests. It runs compiled (dist/bench/run.js, after tsc -p
 * tsconfig.bench.json), as production runs dist/src/main.js: no TypeScript
 * loader in any contender.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { basename, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectPath } from '../src/project-root.js';
import { benchedCommit, loginCost, scryptProbeMs } from './kit/machine-speed.js';

export interface BenchModule {
  /** Returns the markdown body of the result file. */
  default: () => Promise<string>;
}

const BENCH = /\.bench\.[jt]s$/;
const scenariosDir = fileURLToPath(new URL('./scenarios/', import.meta.url));

/** Every scenario under bench/scenarios/, by name, as a path from this file's folder; a name must be unique across the subfolders. */
function discoverScenarios(): Map<string, string> {
  const found = new Map<string, string>();
  for (const path of readdirSync(scenariosDir, { recursive: true, encoding: 'utf8' }).map((p) => p.split(sep).join('/'))) {
    const name = basename(path).replace(BENCH, '');
    if (name === basename(path)) continue;
    const file = `./scenarios/${path}`;
    const other = found.get(name);
    if (other) throw new Error(`two scenarios named ${name}: ${other} and ${file} (a stale copy in dist/ after a move? delete dist/bench and rerun)`);
    found.set(name, file);
  }
  return new Map([...found].sort(([a], [b]) => (a < b ? -1 : 1)));
}

const scenarios = discoverScenarios();
const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const [name, file] of scenarios) console.log(`${name.padEnd(20)} bench/${file.slice(2).replace(/\.js$/, '.ts')}`);
  process.exit(0);
}
const unknown = args.filter((name) => !scenarios.has(name));
if (unknown.length > 0) throw new Error(`no scenario ${unknown.join(', ')}; there are ${[...scenarios.keys()].join(', ')}`);

const resultsDir = projectPath('bench', 'results');
for (const [name, file] of scenarios) {
  if (args.length > 0 && !args.includes(name)) continue;
  console.log(`# ${name}`);
  const mod = (await import(file)) as BenchModule;
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
