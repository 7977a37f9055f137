/**
 * Runs tasks one at a time per key, in the order they were asked for, within
 * this instance. For read-modify-write loops of LWTs on one partition:
 * concurrent Paxos rounds on a partition make each other start again and,
 * past cas_contention_timeout, time out (a request failed for no fault of
 * the client); queued in the process they do not contend, and the rounds of
 * other instances meet one round of this one, not dozens.
 */
export class OneAtATime {
  /** Per key, the promise of the last task queued (never rejects); idle keys are dropped. */
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
