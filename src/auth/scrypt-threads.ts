/**
 * Password hashes run on threads of their own at a lower scheduling priority
 * than the server's (PASSWORD_HASH_NICE more niceness). A scrypt hash at the default cost takes a core for
 * ~0.1–0.3 s; on libuv's thread pool it ran at the priority of the main
 * thread and of the Cassandra node beside it, so 4 connections logging in
 * took a share of the machine from every other request (the history page
 * kept 29–48 % of its rate beside them: bench/results/requests.md). A niced
 * thread takes what the server's request thread leaves, and what processes
 * sharing its scheduling group (its session or cgroup: a load generator run
 * from the same shell, not a Cassandra node started on its own) leave: logins
 * slow down under load, other requests much less. The gate in front (src/auth/password-hasher.ts) still
 * bounds how many hash at once and how many wait.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { DeriveKey, ScryptJob } from './passwords.js';
import type { ScryptThreadData, ScryptThreadMessage } from './scrypt-thread.js';

// The compiled build loads scrypt-thread.js; tests and `npm run dev` load the .ts beside this file.
const THREAD_FILE = new URL(`./scrypt-thread${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** One thread, one job at a time. */
class ScryptThread {
  private readonly worker: Worker;
  private current?: { resolve: (key: Buffer) => void; reject: (err: Error) => void };
  /** Set once the thread has ended or failed; it is then replaced, not reused. */
  dead = false;

  constructor(nice: number, logger: Logger) {
    this.worker = new Worker(THREAD_FILE, { workerData: { nice } satisfies ScryptThreadData });
    // An idle thread must not keep a process alive that has nothing else to do.
    this.worker.unref();
    this.worker.on('message', (message: ScryptThreadMessage) => {
      if ('notNiced' in message) {
        logger.warn({ reason: message.notNiced }, 'password hashing runs at the server priority: the thread could not lower its own');
        return;
      }
      const job = this.current;
      this.current = undefined;
      this.worker.unref();
      if ('key' in message) job?.resolve(Buffer.from(message.key.buffer, message.key.byteOffset, message.key.byteLength));
      else job?.reject(new Error(message.error));
    });
    const end = (err: Error) => {
      this.dead = true;
      this.current?.reject(err);
      this.current = undefined;
    };
    this.worker.on('error', end);
    this.worker.on('exit', (code) => end(new Error(`password hashing thread exited with code ${code}`)));
  }

  derive(job: ScryptJob): Promise<Buffer> {
    if (this.dead) return Promise.reject(new Error('password hashing thread has ended'));
    return new Promise((resolve, reject) => {
      this.current = { resolve, reject };
      // Held open while it hashes: a caller awaiting the key keeps the process alive.
      this.worker.ref();
      this.worker.postMessage(job);
    });
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

export class ScryptThreads {
  private readonly idle: ScryptThread[] = [];
  private readonly waiting: Array<{ resolve: (thread: ScryptThread) => void; reject: (err: Error) => void }> = [];
  private started = 0;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly nice: number,
    private readonly logger: Logger,
  ) {}

  /** A key derived on a thread (bound: handed to passwords.ts as its DeriveKey). */
  readonly derive: DeriveKey = async (job) => {
    const thread = await this.take();
    try {
      return await thread.derive(job);
    } finally {
      this.give(thread);
    }
  };

  /** Ends every thread; a hash asked for afterwards is refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(new Error('password hashing is closed'));
    await Promise.all(this.idle.splice(0).map((thread) => thread.terminate()));
  }

  private take(): Promise<ScryptThread> {
    if (this.closed) return Promise.reject(new Error('password hashing is closed'));
    let thread = this.idle.pop();
    // A thread can end while idle (it crashed after answering): it is dropped here, and replaced below.
    while (thread?.dead) {
      this.started--;
      thread = this.idle.pop();
    }
    if (thread) return Promise.resolve(thread);
    if (this.started < this.size) {
      this.started++;
      return Promise.resolve(new ScryptThread(this.nice, this.logger));
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private give(thread: ScryptThread): void {
    if (thread.dead || this.closed) {
      this.started--;
      if (!thread.dead) void thread.terminate();
      // A waiting job gets a new thread in place of the one that ended.
      const next = this.waiting.shift();
      if (next) {
        this.started++;
        next.resolve(new ScryptThread(this.nice, this.logger));
      }
      return;
    }
    const next = this.waiting.shift();
    if (next) next.resolve(thread);
    else this.idle.push(thread);
  }
}
