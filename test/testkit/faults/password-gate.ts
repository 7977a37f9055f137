/**
 * The password-hashing gate held by a test: each hash that takes a slot stays in it, before its key is derived,
 * until the test releases it (at the latest when the test ends), so the gate is exactly as full as the logins a
 * test sent, however fast scrypt is on the machine.
 */
import { afterEach } from 'vitest';
import type { App } from '../../../src/app.js';
import type { DeriveKey } from '../../../src/auth/passwords.js';

const holds: Array<() => void> = [];
afterEach(() => {
  for (const release of holds.splice(0)) release();
});

/** Holds `app`'s password hashes from now on; `held()` counts those waiting, `release()` lets them all go. */
export function holdHashes(app: App): { held: () => number; release: () => void } {
  const threads = (app.services.passwords as unknown as { threads: { derive: DeriveKey } }).threads;
  const derive = threads.derive;
  const waiting: Array<() => void> = [];
  threads.derive = (job) => new Promise<void>((go) => waiting.push(go)).then(() => derive(job));
  const release = () => {
    threads.derive = derive;
    for (const go of waiting.splice(0)) go();
  };
  holds.push(release);
  return { held: () => waiting.length, release };
}
