/**
 * A row of bench/scenarios/requests/requests.bench.ts: the four contenders' figures for one
 * scenario at one concurrency, its markdown lines, and which of issue 12's
 * targets it misses.
 */
export const CONTENDERS = ['parley', 'floor', 'apollo', 'mercurius'] as const;
export type ContenderName = (typeof CONTENDERS)[number];

/** Per contender: req/s, p99, and the server process's CPU per request (µs, user and system, from /proc). */
export type Row = Record<ContenderName, { rps: number; p99: number; cpuUs: number }> & {
  errors: number;
  /** The req/s of the load beside the row's, if it had one (logins served beside a history load). */
  besideRps?: Record<ContenderName, number>;
};

/** Issue 12's targets for every request scenario. */
export const TARGETS = { floorRps: 0.8, floorP99: 1.5, bestPeerRps: 1.0 } as const;

export const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : '–');
/** A missed target's ratio, to three places: 0.995 must not read as a met 1.00. */
const missRatio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(3) : '–');

/** The faster of Apollo Server and Mercurius in this row. */
export const bestPeer = (r: Row): 'apollo' | 'mercurius' => (r.apollo.rps >= r.mercurius.rps ? 'apollo' : 'mercurius');

export interface Miss {
  /** The contender Parley fell short of. */
  against: ContenderName;
  /** What it missed, with the figure: "req/s 0.75 of the floor's (target 0.8)". */
  what: string;
}

/** The targets this row misses (none when Parley meets all three). */
export function missedTargets(r: Row): Miss[] {
  const misses: Miss[] = [];
  if (r.parley.rps < TARGETS.floorRps * r.floor.rps) {
    misses.push({ against: 'floor', what: `req/s ${missRatio(r.parley.rps, r.floor.rps)} of the floor's (target ${TARGETS.floorRps})` });
  }
  if (r.parley.p99 > TARGETS.floorP99 * r.floor.p99) {
    misses.push({ against: 'floor', what: `p99 ${missRatio(r.parley.p99, r.floor.p99)} of the floor's (target at most ${TARGETS.floorP99})` });
  }
  const peer = bestPeer(r);
  if (r.parley.rps < TARGETS.bestPeerRps * r[peer].rps) {
    misses.push({ against: peer, what: `req/s ${missRatio(r.parley.rps, r[peer].rps)} of ${peer}'s (target ${TARGETS.bestPeerRps})` });
  }
  return misses;
}

export const TABLE_HEAD = [
  '| scenario, connections | Parley | floor | Apollo | Mercurius | Parley/floor req/s | Parley/floor p99 | Parley/best peer req/s | errors |',
  '|---|---|---|---|---|---|---|---|---|',
];

export function tableRow(label: string, r: Row): string {
  const cells = CONTENDERS.map((n) => `${r[n].rps.toFixed(0)} / ${r[n].p99}`);
  return `| ${label} | ${cells.join(' | ')} | ${ratio(r.parley.rps, r.floor.rps)} | ${ratio(r.parley.p99, r.floor.p99)} | ${ratio(r.parley.rps, r[bestPeer(r)].rps)} | ${r.errors} |`;
}

export const CPU_TABLE_HEAD = [
  '| scenario, connections | Parley | floor | Apollo | Mercurius | Parley/floor | Parley/best peer |',
  '|---|---|---|---|---|---|---|',
];

/** CPU per request of each contender's server process, and Parley's against the floor's and the cheaper peer's. */
export function cpuRow(label: string, r: Row): string {
  const cells = CONTENDERS.map((n) => r[n].cpuUs.toFixed(0));
  const cheaperPeer = Math.min(r.apollo.cpuUs, r.mercurius.cpuUs);
  return `| ${label} | ${cells.join(' | ')} | ${ratio(r.parley.cpuUs, r.floor.cpuUs)} | ${ratio(r.parley.cpuUs, cheaperPeer)} |`;
}
