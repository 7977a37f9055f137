/**
 * `npm run bench:profile [scenario]`: a CPU profile of Parley serving one
 * request scenario of bench/request-scenarios.ts (the history page of 50 by
 * default) under autocannon at concurrency 16 for 10 s (bench/cpu-profile.ts),
 * and where its time went.
 */
import { startServerProcess } from './server-process.js';
import { PRODUCTION_ENV } from './scenarios.js';
import { seedRequestScenarios } from './request-scenarios.js';
import { profileScenario } from './cpu-profile.js';

const seeder = await startServerProcess(PRODUCTION_ENV);
const scenarios = await seedRequestScenarios(seeder.url);
await seeder.stop();
const scenario = scenarios[process.argv[2] ?? 'history'];
if (!scenario) throw new Error(`no scenario ${process.argv[2]}; there are ${Object.keys(scenarios).join(', ')}`);
const profile = await profileScenario(scenario);
const pct = (v: number) => `${(100 * v).toFixed(1).padStart(5)}%`;
console.log(`${profile.file}\nby function:`);
for (const [key, share] of profile.byFunction.slice(0, 25)) console.log(`${pct(share)}  ${key}`);
console.log('by place:');
for (const [key, share] of profile.byPlace.slice(0, 25)) console.log(`${pct(share)}  ${key}`);
process.exit(0);
