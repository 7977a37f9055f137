/**
 * Where live fan-out's CPU goes: the fan-out benchmark's stage
 * (bench/kit/fanout/setup.ts), one step of STEP_MS at a fixed rate for Parley and
 * then for the relay floor, each server process's CPU time per delivery over
 * its step (user and system, from /proc), the same for Parley's delivery
 * alone (events published straight to its Redis channel, nothing posted),
 * the machine's busiest processes over each step, and Parley's instances
 * profiled with --cpu-prof over Parley's step and over its delivery alone. `npm run bench:profile fanout [rate]`.
 */
import { setUpFanout } from './setup.js';
import { oneRedis } from './bus.js';
import { runStep, warmUp, type Contender, type StepResult } from './ramp.js';
import { cpuProfArgs, profileClockUs, summarizeProfile, type CpuProfile } from '../profiles/cpu-profile.js';
import type { ServerProcess } from '../servers/server-process.js';
import { cpuUs, everyProcess, spentBetween } from '../profiles/process-cpu.js';

const STEP_MS = 10_000;
const WARM_UP_MAX = 300;
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
  const machine = spentBetween(machineBefore, everyProcess()).slice(0, 10);
  const each = step.delivered / processes.length;
  const perDelivery = processes.map((_, i) => ({
    user: (after[i]!.user - before[i]!.user) / each,
    system: (after[i]!.system - before[i]!.system) / each,
  }));
  return { name: contender.name, step, perDelivery, machine, from, to };
}

/** Parley, then Parley's delivery alone (no posts: see FanoutStage), then the relay floor; Parley's instances profiled over both of their steps. */
export async function profileFanout(rate: number): Promise<{ cpu: FanoutCpu[]; profiles: CpuProfile[]; deliveryOnlyProfiles: CpuProfile[] }> {
  const posts = (rate * STEP_MS) / 1000;
  const stage = await setUpFanout(WARM_UP_MAX + 2 * posts + 1, oneRedis(), cpuProfArgs());
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
  return {
    cpu: [parley, deliveryOnly, relay],
    profiles: stage.servers.map((s) => summarizeProfile(s.pid, parley.from, parley.to)),
    deliveryOnlyProfiles: stage.servers.map((s) => summarizeProfile(s.pid, deliveryOnly.from, deliveryOnly.to)),
  };
}
