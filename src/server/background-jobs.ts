/**
 * The instance's background jobs, started by the app after it listens and
 * stopped before it lets go of storage. Each is a loop around a use case.
 */
import type { Services } from '../services.js';
import { recoverPendingPurchases } from '../resolvers/marketplace/completion.js';

/** Stops the job and waits for a run in progress. */
export type BackgroundJob = () => Promise<void>;

/** Every background job of an instance, started together; the result stops them all. */
export function startBackgroundJobs(services: Services): BackgroundJob {
  services.rooms.presence.start();
  const jobs = [startPurchaseRecovery(services), () => services.rooms.presence.stop()];
  return async () => {
    await Promise.all(jobs.map((stop) => stop()));
  };
}

/**
 * Runs recovery now and then every `recoveryIntervalMs` (never two runs at
 * once). The returned function stops it and waits for a run in progress.
 */
export function startPurchaseRecovery(services: Services): BackgroundJob {
  const { logger, config } = services;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = recoverPendingPurchases(services)
      .then((n) => {
        if (n > 0) logger.info({ completed: n }, 'recovered pending purchases');
      })
      .catch((err) => logger.error({ err }, 'purchase recovery failed'))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(run, config.marketplace.recoveryIntervalMs);
        timer.unref();
      });
  };
  run();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
