/**
 * CPU time of the machine's processes, from /proc (Linux): what each
 * contender's processes, and the Cassandra node beside them, spent over a
 * step of a benchmark. On a shared 2-core machine this tells what bounds a
 * contender where its own profile cannot.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS_PER_SEC = 100;

/** A process's CPU time so far, user and system, in microseconds (zero for a process that is gone). */
export function cpuUs(pid: number): { user: number; system: number } {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return { user: 0, system: 0 };
  }
  // The command name is in parentheses and may hold spaces: fields are counted after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tick = 1e6 / TICKS_PER_SEC;
  return { user: Number(fields[11]) * tick, system: Number(fields[12]) * tick };
}

const totalUs = (pid: number) => {
  const { user, system } = cpuUs(pid);
  return user + system;
};

function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** The pid of a Cassandra node running on this machine (the bench's local node, not a cluster's), if any. */
export function cassandraPid(): number | undefined {
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const args = commandLine(pid);
    if (args.some((a) => a.includes('CassandraDaemon')) && !args.some((a) => a.startsWith('-Dcassandra.storagedir=') && a.includes('/cluster/'))) return pid;
  }
  return undefined;
}

/** Every process's CPU time so far (µs) and a short name for it (its command line's first words). */
export function everyProcess(): Map<number, { name: string; us: number }> {
  const all = new Map<number, { name: string; us: number }>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const cmdline = commandLine(pid);
    const name = cmdline.some((a) => a.includes('CassandraDaemon')) ? 'cassandra' : cmdline.slice(0, 3).map((a) => a.split('/').pop()).join(' ');
    all.set(pid, { name, us: totalUs(pid) });
  }
  return all;
}

/** What each process spent between two readings of everyProcess, largest first (µs). */
export function spentBetween(before: Map<number, { name: string; us: number }>, after: Map<number, { name: string; us: number }>): Array<[string, number]> {
  const rows: Array<[string, number]> = [];
  for (const [pid, { name, us }] of after) rows.push([`${pid} ${name}`, us - (before.get(pid)?.us ?? 0)]);
  return rows.filter(([, us]) => us > 0).sort((a, b) => b[1] - a[1]);
}

/**
 * Starts timing groups of processes; the function returned gives, per group,
 * the cores they kept busy on average since (CPU seconds per wall second).
 */
export function watchCpu<G extends string>(groups: Record<G, number[]>): () => Record<G, number> {
  const began = performance.now();
  const at = (pids: number[]) => pids.reduce((sum, pid) => sum + totalUs(pid), 0);
  const before = Object.fromEntries(Object.entries<number[]>(groups).map(([g, pids]) => [g, at(pids)])) as Record<G, number>;
  return () => {
    const wallUs = (performance.now() - began) * 1000;
    return Object.fromEntries(Object.entries<number[]>(groups).map(([g, pids]) => [g, (at(pids) - before[g as G]) / wallUs])) as Record<G, number>;
  };
}
