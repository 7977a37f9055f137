/**
 * The marketplace's timing, in one file: how long a purchase can stay in
 * flight (a rule the request, recovery and idempotent retries all rely on),
 * and how far back recovery looks.
 */
import { timeUuidDate } from '../../timeuuids.js';
import { PURCHASE_TTL_SECONDS } from '../../db/marketplace/purchases.js';
import type { Services } from '../services.js';

/**
 * A request stops trying to bind a purchase this long after creating it, with
 * CONFLICT. Binds take well under a second even under contention.
 */
export const BIND_DEADLINE_MS = 30_000;

/**
 * A purchase this old that a SERIAL read finds unbound never will be bound:
 * its request is past the bind deadline, with room for clock skew between
 * instances and for an LWT still travelling. Recovery then forgets its
 * pending entry, and a retry with its clientPurchaseId takes the key over.
 */
export const UNBOUND_IS_FINAL_MS = 4 * BIND_DEADLINE_MS;

/**
 * By this age the claimed purchase's own request has normally completed it; if
 * not, it may have died after the bind, so a retry checks (once, SERIAL) and finishes it.
 */
export const SETTLE_MS = 3_000;

const HOUR_MS = 3_600_000;

/** Recovery reads the pending hours a purchase can still be in: its row's lifetime, and an hour of clock skew either way. */
export const RECOVERY_LOOKBACK_MS = PURCHASE_TTL_SECONDS * 1000 + HOUR_MS;
export const RECOVERY_LOOKAHEAD_MS = HOUR_MS;

/** How long an attempt with a clientPurchaseId waits for another attempt with the same id before answering CONFLICT. */
export const DUPLICATE_WAIT_MS = 10_000;

/** How long ago a purchase was created (its id is a timeuuid of that time, by the injectable clock). */
export const purchaseAgeMs = (services: Services, purchaseId: string) =>
  services.clock.now().getTime() - timeUuidDate(purchaseId).getTime();
