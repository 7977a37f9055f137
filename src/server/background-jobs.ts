/**
 * The instance's background jobs, started by the app after it listens and
 * stopped before it lets go of storage. Each is a loop around a use case.
 */
import type { Services } from '../resolvers/services.js';
import { recoverPendingPurchases } from '../resolvers/marketplace/completion.js';
import { finishPendingCleanups } from '../resolvers/rooms/room-cleanup.js';
import { finishPendingNotices } from '../resolvers/rooms/room-notices.js';
import { dropUnattachedUploads } from '../resolvers/files/cleanup.js';

/** Stops the job and waits for a run in progress. */
export type BackgroundJob = () => Promise<void>;

/** Every background job of an instance, started together; the result stops them all. */
export function startBackgroundJobs(services: Services): BackgroundJob {
  services.rooms.presence.start();
  const jobs = [
    startPurchaseRecovery(services),
    startRoomCleanupRecovery(services),
    startNoticeCompletion(services),
    startUploadCleanup(services),
    () => services.rooms.presence.stop(),
  ];
  return async () => {
    await Promise.all(jobs.map((stop) => stop()));
  };
}

/** Completes purchases bound by a request that died before completing them: at start, then every interval. */
function startPurchaseRecovery(services: Services): BackgroundJob {
  return everyInterval(services.config.marketplace.recoveryIntervalMs, logged(services, () => recoverPendingPurchases(services), {
    done: 'recovered pending purchases',
    failed: 'purchase recovery failed',
  }));
}

/** Finishes the cleanups of deleted rooms whose deleting request died midway: at start, then every interval. */
function startRoomCleanupRecovery(services: Services): BackgroundJob {
  return everyInterval(services.config.rooms.cleanupRecoveryIntervalMs, logged(services, () => finishPendingCleanups(services), {
    done: 'finished the cleanups of deleted rooms',
    failed: 'room cleanup recovery failed',
  }));
}

/** Completes the joins, leaves and removals whose system message a request left unwritten: at start, then every interval. */
function startNoticeCompletion(services: Services): BackgroundJob {
  return everyInterval(services.config.rooms.cleanupRecoveryIntervalMs, logged(services, () => finishPendingNotices(services), {
    done: 'completed pending room notices',
    failed: 'room notice completion failed',
  }));
}

/** Drops the uploads cut off, or never attached within a day: at start, then every interval. */
function startUploadCleanup(services: Services): BackgroundJob {
  return everyInterval(services.config.rooms.cleanupRecoveryIntervalMs, logged(services, () => dropUnattachedUploads(services), {
    done: 'dropped unattached uploads',
    failed: 'unattached upload cleanup failed',
  }));
}

/** A run that logs how many things it did (when any) and its failure, and never rejects. */
function logged(services: Services, run: () => Promise<number>, messages: { done: string; failed: string }): () => Promise<void> {
  return async () => {
    try {
      const n = await run();
      if (n > 0) services.logger.info({ count: n }, messages.done);
    } catch (err) {
      services.logger.error({ err }, messages.failed);
    }
  };
}

/**
 * Runs `run` now and then `intervalMs` after each run ends (never two runs at
 * once). The returned function stops it and waits for a run in progress.
 */
function everyInterval(intervalMs: number, run: () => Promise<void>): BackgroundJob {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const next = () => {
    running = run().finally(() => {
      if (stopped) return;
      timer = setTimeout(next, intervalMs);
      timer.unref();
    });
  };
  next();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
