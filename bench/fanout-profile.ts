/**
 * Where live fan-out's CPU goes: the fan-out benchmark's stage
 * (bench/fanout-setup.ts), one step of STEP_MS at a fixed rate for Parley and
 * then for the relay floor, each server process's CPU time per delivery over
 * its step (user and system, from /proc), the same for Parley's delivery
 * alone (events published straight to its Redis channel, nothing posted),
 * the machine's busiest processes over each step, and Parley's instances
 * profiled with --cpu-prof over Parley's step. `npm run bench:profile fanout [rate]`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setUpFanout } from './fanout-setup.js';
import { runStep, warmUp, type Contender, type StepResult } from './fanout-ramp.js';
import { cpuProfArgs, profileClockUs, summarizeProfile, type CpuProfile } from './cpu-profile.js';
import type { ServerProcess } from './server-process.js';

const STEP_MS = 10_000;
const WARM_UP_MAX = 300;
/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS_PER_SEC = 100;

/** A process's CPU time so far, user and system, in microseconds. */
function cpuUs(pid: number): { user: number; system: number } {
  // The command name is in parentheses and may hold spaces: fields are counted after it.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tick = 1e6 / TICKS_PER_SEC;
  return { user: Number(fields[11]) * tick, system: Number(fields[12]) * tick };
}

/** Every process's CPU time so far (µs) and a short name for it (its command line's last words). */
function everyProcess(): Map<number, { name: string; us: number }> {
  const all = new Map<number, { name: string; us: number }>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const { user, system } = cpuUs(pid);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const name = cmdline.some((a) => a.includes('CassandraDaemon')) ? 'cassandra' : cmdline.slice(0, 3).map((a) => a.split('/').pop()).join(' ');
      all.set(pid, { name, us: user + system });
    } catch {
      // gone meanwhile
    }
  }
  return all;
}

/** What each process spent between two readings of everyProcess, by pid, largest first (µs). */
function spent(before: Map<number, { name: string; us: number }>, after: Map<number, { name: string; us: number }>): Array<[string, number]> {
  const rows: Array<[string, number]> = [];
  for (const [pid, { name, us }] of after) rows.push([`${pid} ${name}`, us - (before.get(pid)?.us ?? 0)]);
  return rows.filter(([, us]) => us > 0).sort((a, b) => b[1] - a[1]);
}

export interface FanoutCpu {
  name: string;
  step: StepResult;
  /** Per server process: CPU µs per delivery it made (deliveries split evenly: each holds half the sockets). */
  perDelivery: Array<{ user: number; system: number }>;
  /** The machine's busiest processes over the step, and the CPU time each spent (µs). */
  machine: Array<[string, number]>;
}

async function measured(contender: Contender, processes: ServerProcess[], rate: number, seq0: number): Promise<FanoutCpu & { from: bigint; to: bigint }> {
  const machineBefore = everyProcess();
  const before = processes.map((p) => cpuUs(p.pid));
  const from = profileClockUs();
  const step = await runStep(contender, rate, STEP_MS, seq0);
  const to = profileClockUs();
  const after = processes.map((p) => cpuUs(p.pid));
  const machine = spent(machineBefore, everyProcess()).slice(0, 10);
  const each = step.delivered / processes.length;
  const perDelivery = processes.map((_, i) => ({
    user: (after[i]!.user - before[i]!.user) / each,
    system: (after[i]!.system - before[i]!.system) / each,
  }));
  return { name: contender.name, step, perDelivery, machine, from, to };
}

/** Parley, then Parley's delivery alone (no posts: see FanoutStage), then the relay floor; Parley's instances profiled over Parley's step. */
export async function profileFanout(rate: number): Promise<{ cpu: FanoutCpu[]; profiles: CpuProfile[] }> {
  const posts = (rate * STEP_MS) / 1000;
  const stage = await setUpFanout(WARM_UP_MAX + 2 * posts + 1, cpuProfArgs());
  let parley;
  let deliveryOnly;
  let relay;
  try {
    const seq0 = await warmUp(stage.parley, 0, WARM_UP_MAX);
    await warmUp(stage.relay, 0, WARM_UP_MAX);
    parley = await measured(stage.parley, stage.servers, rate, seq0);
    deliveryOnly = await measured(stage.deliveryOnly, stage.servers, rate, seq0 + parley.step.posts);
    relay = await measured(stage.relay, stage.relays, rate, seq0);
  } finally {
    await stage.stop();
  }
  return { cpu: [parley, deliveryOnly, relay], profiles: stage.servers.map((s) => summarizeProfile(s.pid, parley.from, parley.to)) };
}
