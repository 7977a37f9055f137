/**
 * `npm run bench:profile [scenario]`: a CPU profile of Parley serving one
 * request scenario of bench/kit/requests/scenarios.ts (the history page of 50 by
 * default) under autocannon at concurrency 16 for 10 s (bench/kit/profiles/cpu-profile.ts),
 * and where its time went. `npm run bench:profile fanout [rate]`: live
 * fan-out at `rate` posts/s (40 by default), CPU per delivery of Parley's
 * instances and of the relay floor's, and where Parley's time went
 * (bench/kit/fanout/profile.ts).
 */
import { startServerProcess } from './kit/servers/server-process.js';
import { PRODUCTION_ENV } from './kit/remote-parley.js';
import { seedRequestScenarios, type RequestScenario } from './kit/requests/scenarios.js';
import { allocationsOf, largestDifferences, profileScenario, usPerRequest, type CpuProfile } from './kit/profiles/cpu-profile.js';
import { profileFanout } from './kit/fanout/profile.js';
import { STARTERS, requestFor } from './kit/requests/contenders.js';

const pct = (v: number) => `${(100 * v).toFixed(1).padStart(5)}%`;
/** A peer named on the command line, if `arg` names one. */
const peerNamed = (arg: string | undefined) => (arg === 'mercurius' || arg === 'apollo' || arg === 'floor' ? arg : undefined);
/** How the counterpart is asked, as the requests bench asks it (the floor takes a scenario's variables at its own path). */
const loadOf = (other: 'mercurius' | 'apollo' | 'floor') => ({ request: (url: string, s: RequestScenario) => requestFor(other, url, s) });

/** Parley's figures beside a peer's, key by key, the largest differences first. */
function sideBySide(title: string, ours: Array<[string, number]>, theirs: Array<[string, number]>, rows: number, digits: number): void {
  console.log(`${title}, largest differences first`);
  for (const [k, a, b] of largestDifferences(ours, theirs).slice(0, rows)) console.log(`${a.toFixed(digits).padStart(8)} ${b.toFixed(digits).padStart(8)}  ${k}`);
}
function print(profile: CpuProfile): void {
  console.log(`${profile.file}\nby function:`);
  for (const [key, share] of profile.byFunction.slice(0, 25)) console.log(`${pct(share)}  ${key}`);
  console.log('by place:');
  for (const [key, share] of profile.byPlace.slice(0, 25)) console.log(`${pct(share)}  ${key}`);
}

if (process.argv[2] === 'fanout') {
  const { cpu, profiles, deliveryOnlyProfiles } = await profileFanout(Number(process.argv[3] ?? 40));
  for (const c of cpu) {
    const s = c.step;
    console.log(`${c.name} @ ${s.rate}/s: ${s.deliveriesPerSec.toFixed(0)} deliveries/s, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, lost ${s.lost}`);
    for (const [i, d] of c.perDelivery.entries()) {
      console.log(`  process ${i + 1}: ${(d.user + d.system).toFixed(2)} µs of CPU per delivery (user ${d.user.toFixed(2)}, system ${d.system.toFixed(2)})`);
    }
    console.log(`  the machine's busiest processes over the step (CPU s): ${c.machine.map(([name, us]) => `${name} ${(us / 1e6).toFixed(2)}`).join('; ')}`);
  }
  for (const profile of profiles) print(profile);
  // What posting adds on each instance: time by function in Parley's step less the same in the delivery-alone step.
  for (const [i, withPosts] of profiles.entries()) {
    const alone = new Map(deliveryOnlyProfiles[i]!.byFunction.map(([k, share]) => [k, share * deliveryOnlyProfiles[i]!.sampledMs]));
    const added = withPosts.byFunction.map(([k, share]): [string, number] => [k, share * withPosts.sampledMs - (alone.get(k) ?? 0)]).sort((a, b) => b[1] - a[1]);
    console.log(`instance ${i + 1}: ms by function in Parley's step beyond its delivery alone (same length, same rate)`);
    for (const [key, ms] of added.slice(0, 30)) console.log(`${ms.toFixed(0).padStart(7)} ms  ${key}`);
  }
  process.exit(0);
}

const seeder = await startServerProcess(PRODUCTION_ENV);
const scenarios = await seedRequestScenarios(seeder.url);
await seeder.stop();
if (process.argv[2] === 'allocations') {
  // `npm run bench:profile allocations <scenario> [mercurius|apollo]`: bytes allocated per request, Parley beside the peer.
  const scenario = scenarios[process.argv[3] ?? 'history']!;
  const other = peerNamed(process.argv[4]) ?? 'mercurius';
  const ours = await allocationsOf(scenario);
  const theirs = await allocationsOf(scenario, STARTERS[other], loadOf(other));
  console.log(`bytes allocated per request: Parley ${ours.perRequest.toFixed(0)}, ${other} ${theirs.perRequest.toFixed(0)}`);
  for (const by of ['byPlace', 'byFunction'] as const) {
    sideBySide(`${by}: bytes per request, Parley against ${other}`, ours[by], theirs[by], by === 'byPlace' ? 25 : 60, 0);
  }
  process.exit(0);
}
const scenario = scenarios[process.argv[2] ?? 'history'];
if (!scenario) throw new Error(`no scenario ${process.argv[2]}; there are ${Object.keys(scenarios).join(', ')}`);
// `npm run bench:profile <scenario> mercurius` (or apollo, or floor): Parley, then that peer serving the same schema, each place's
// and function's time per request side by side.
const peer = peerNamed(process.argv[3]);
const parley = await profileScenario(scenario, PRODUCTION_ENV);
print(parley);
if (peer) {
  const other = await profileScenario(scenario, PRODUCTION_ENV, STARTERS[peer], loadOf(peer));
  for (const by of ['byPlace', 'byFunction'] as const) {
    const title = `${by}: µs per request, Parley against ${peer} (${parley.requests} and ${other.requests} requests in 10 s)`;
    sideBySide(title, usPerRequest(parley, parley[by]), usPerRequest(other, other[by]), by === 'byPlace' ? 25 : 70, 1);
  }
}
process.exit(0);
