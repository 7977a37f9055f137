/**
 * `npm run bench:profile [scenario]`: a CPU profile of Parley serving one
 * request scenario of bench/request-scenarios.ts (the history page of 50 by
 * default) under autocannon at concurrency 16 for 10 s, and the 25 functions
 * with the most self time. The .cpuprofile file lands in bench/profiles/ (not
 * committed) for Chrome's DevTools.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { projectPath } from '../src/project-root.js';
import autocannon from 'autocannon';
import { startServerProcess } from './server-process.js';
import { PRODUCTION_ENV } from './scenarios.js';
import { seedRequestScenarios } from './request-scenarios.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const dir = projectPath('bench', 'profiles') + '/';
mkdirSync(dir, { recursive: true });
const before = new Set(readdirSync(dir));
const server = await startServerProcess(PRODUCTION_ENV, [`--cpu-prof`, `--cpu-prof-dir=${dir}`]);
const scenarios = await seedRequestScenarios(server.url);
const scenario = scenarios[process.argv[2] ?? 'history'];
if (!scenario) throw new Error(`no scenario ${process.argv[2]}; there are ${Object.keys(scenarios).join(', ')}`);
await autocannon({
  url: `${server.url}/graphql`,
  method: 'POST',
  connections: 16,
  duration: 10,
  headers: { 'content-type': 'application/json', ...(scenario.token ? { authorization: `Bearer ${scenario.token}` } : {}) },
  body: JSON.stringify({ query: scenario.query, variables: scenario.variables }),
});
await server.stop();
const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
const profile = JSON.parse(readFileSync(dir + file, 'utf8')) as { nodes: ProfileNode[] };
const self = new Map<string, number>();
let total = 0;
for (const n of profile.nodes) {
  const hits = n.hitCount ?? 0;
  total += hits;
  const where = n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist\/)?(src|bench)\//, '$2/');
  const key = `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + hits);
}
console.log(`${dir}${file}: ${total} samples`);
for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
  console.log(`${((100 * hits) / total).toFixed(1).padStart(5)}%  ${key}`);
}
process.exit(0);
