/**
 * Per-instance state of the marketplace: counters an operator (or a benchmark)
 * reads, and hooks tests use to interrupt a purchase at a chosen step. It lives
 * in Services (services.marketplace), so two app instances in one process never
 * share it; the hooks come in through AppOptions.
 */

export interface MarketplaceStats {
  /** Binds that lost the race (the LWT did not apply) and were tried again. */
  bindRetries: number;
  /** Purchases given up with CONFLICT because the bound on attempts (or the bind deadline) was hit. */
  bindConflicts: number;
  /** The most bind attempts one purchase has needed (or used up): how close buyers come to the bound. */
  maxBindAttempts: number;
  /** Purchases completed by recovery rather than by the request that bound them. */
  recovered: number;
  /** Recovery passes finished on this instance. */
  recoveryRuns: number;
  /** Hour partitions of pending purchases recovery could not read (skipped until the next run). */
  recoveryHourFailures: number;
}

export interface MarketplaceHooks {
  /** Runs before each bind attempt (tests: make another buyer win the race). */
  beforeBind?: (purchaseId: string, attempt: number) => Promise<void> | void;
  /** Runs right after a successful bind (tests: throw to simulate a crash before completion). */
  afterBind?: (purchaseId: string) => Promise<void> | void;
  /** Runs as a completion begins, for the request and recovery alike (tests: throw to make completion fail). */
  beforeCompletion?: (purchaseId: string) => Promise<void> | void;
  /** Runs before recovery reads one hour of pending purchases (tests: throw to make that hour fail). */
  beforeRecoveryHour?: (hour: number) => Promise<void> | void;
}

export interface MarketplaceRuntime {
  stats: MarketplaceStats;
  hooks: MarketplaceHooks;
}

/** Production's hooks: none, and none can be added. */
const NO_HOOKS: MarketplaceHooks = Object.freeze({});

/** A new instance's runtime: counters at zero, and the fault hooks a test passed in (none in production). */
export function newMarketplaceRuntime(hooks: MarketplaceHooks = NO_HOOKS): MarketplaceRuntime {
  return {
    stats: { bindRetries: 0, bindConflicts: 0, maxBindAttempts: 0, recovered: 0, recoveryRuns: 0, recoveryHourFailures: 0 },
    hooks,
  };
}
