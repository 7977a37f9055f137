/**
 * One password-hashing thread of src/auth/scrypt-threads.ts. It first lowers
 * its own scheduling priority, then derives one scrypt key per message.
 *
 * Node loads this file itself, as TypeScript in tests and in development
 * (Node strips the types), so it imports nothing of the project's but types.
 */
import { scryptSync } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { ScryptJob } from './passwords.js';

export interface ScryptThreadData {
  /** The niceness this thread adds to the process's own (up to 19, the lowest priority). */
  nice: number;
}

export type ScryptThreadMessage = { key: Uint8Array } | { error: string } | { notNiced: string };

const port = parentPort!;
const { nice } = workerData as ScryptThreadData;

if (nice > 0) {
  try {
    // Linux alone: /proc/thread-self names this thread's id, and setpriority on
    // a thread id renices that thread alone, not the server's main thread.
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    // Added to the niceness it was started with (the process's): a server run niced keeps its hashes below it.
    setPriority(threadId, Math.min(19, getPriority(threadId) + nice));
  } catch (err) {
    port.postMessage({ notNiced: (err as Error).message } satisfies ScryptThreadMessage);
  }
}

port.on('message', (job: ScryptJob) => {
  let answer: ScryptThreadMessage;
  try {
    answer = { key: scryptSync(job.password, job.salt, job.keyLength, job.options) };
  } catch (err) {
    answer = { error: (err as Error).message };
  }
  port.postMessage(answer);
});
