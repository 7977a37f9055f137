/**
 * Runs `fn` once at `at` by the given clock, even beyond setTimeout's longest
 * delay (about 24.8 days), reached then in several steps. Returns a canceller.
 * The timer never keeps the process alive.
 */
import { systemClock, type Clock } from './clock.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

export function atTime(at: Date, fn: () => void, clock: Clock = systemClock): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = at.getTime() - clock.now().getTime();
    if (left <= 0) return fn();
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}
