/**
 * What bounds Parley where a row of the requests bench misses a target: the
 * row's scenario profiled (--cpu-prof, 10 s under autocannon at the row's
 * concurrency, with the load beside it if it had one) in Parley and in each
 * contender it fell short of, one after the other, while the run's other contenders idle. The lines give the requests each
 * served in the window, each main thread's busy time per request, and where
 * Parley's time per request differs most from the other's.
 */
import { busyUsPerRequest, largestDifferences, profileScenario, usPerRequest, type CpuProfile, type StartServer } from '../profiles/cpu-profile.js';
import type { HttpRequest } from './load.js';
import type { RequestScenario } from './scenarios.js';
import type { ContenderName, Miss } from './rows.js';

export interface MissedRow {
  label: string;
  scenario: RequestScenario;
  connections: number;
  misses: Miss[];
  /** A load that ran beside the row's (logins), and runs beside it under the profiler too. */
  beside?: { scenario: RequestScenario; connections: number; title: string };
}

export interface Contenders {
  start: Record<ContenderName, StartServer>;
  request: (name: ContenderName, url: string, s: RequestScenario) => HttpRequest;
}

const us = (v: number) => v.toFixed(1);

/** The `n` keys where two profiles' µs per request differ most, as "key a against b". */
function differences(ours: CpuProfile, theirs: CpuProfile, by: 'byPlace' | 'byFunction', n: number): string {
  return largestDifferences(usPerRequest(ours, ours[by]), usPerRequest(theirs, theirs[by]))
    .slice(0, n)
    .map(([k, a, b]) => `${k} ${us(a)} against ${us(b)}`)
    .join('; ');
}

/** Markdown lines for each missed row, its profiles taken now (about 15 s per contender). */
export async function profileMisses(rows: MissedRow[], env: Record<string, string>, contenders: Contenders): Promise<string[]> {
  const lines: string[] = [];
  for (const row of rows) {
    console.log(`  profile of a missed row: ${row.label}`);
    const profile = (name: ContenderName) =>
      profileScenario(row.scenario, env, contenders.start[name], { connections: row.connections, request: (url, s) => contenders.request(name, url, s), beside: row.beside });
    const parley = await profile('parley');
    const how = row.beside ? `Beside ${row.beside.title}` : 'Alone';
    lines.push(
      `- ${row.label}: missed ${row.misses.map((m) => m.what).join('; ')}. ${how} for 10 s at ${row.connections} connections, under the profiler:`,
      `  Parley served ${parley.requests} requests, its process busy ${us(busyUsPerRequest(parley))} µs per request.`,
    );
    for (const name of new Set(row.misses.map((m) => m.against))) {
      const other = await profile(name);
      lines.push(
        `  ${name} served ${other.requests}, busy ${us(busyUsPerRequest(other))} µs per request (Parley/${name} requests served: ${((parley.requests ?? 0) / (other.requests || 1)).toFixed(2)}).`,
        `  µs per request, Parley against ${name}, largest differences by place: ${differences(parley, other, 'byPlace', 6)}.`,
        `  By function: ${differences(parley, other, 'byFunction', 6)}.`,
      );
    }
  }
  return lines;
}
