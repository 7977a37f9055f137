// OneAtATime: the per-key queue that keeps an instance's LWT loops on one partition from contending in Paxos.
import { describe, expect, it } from 'vitest';
import { OneAtATime } from '../../src/db/cassandra/one-at-a-time.js';

/** A task that records when it starts and ends, and finishes when told. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    open,
    task: async () => {
      log.push(`${name} start`);
      await opened;
      log.push(`${name} end`);
      return name;
    },
  };
}

describe('one at a time per key', () => {
  it('runs the tasks of one key in the order asked, each after the last has ended', async () => {
    const queue = new OneAtATime();
    const log: string[] = [];
    const [first, second, third] = ['a1', 'a2', 'a3'].map((name) => gate(log, name));
    const results = [first!, second!, third!].map((g) => queue.run('a', g.task));
    await Promise.resolve();
    expect(log).toEqual(['a1 start']);
    third!.open();
    second!.open();
    first!.open();
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'a3']);
    expect(log).toEqual(['a1 start', 'a1 end', 'a2 start', 'a2 end', 'a3 start', 'a3 end']);
  });

  it('runs tasks of different keys side by side', async () => {
    const queue = new OneAtATime();
    const log: string[] = [];
    const a = gate(log, 'a');
    const b = gate(log, 'b');
    const done = [queue.run('a', a.task), queue.run('b', b.task)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['a start', 'b start']);
    b.open();
    a.open();
    expect(await Promise.all(done)).toEqual(['a', 'b']);
  });

  it('goes on after a task fails, which fails only its own caller', async () => {
    const queue = new OneAtATime();
    const failed = queue.run('a', () => Promise.reject(new Error('timed out')));
    const next = queue.run('a', async () => 'next');
    await expect(failed).rejects.toThrow('timed out');
    expect(await next).toBe('next');
  });

  it('keeps nothing for a key once its tasks are done', async () => {
    const queue = new OneAtATime();
    await Promise.all([queue.run('a', async () => 1), queue.run('a', async () => 2)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect((queue as unknown as { tails: Map<string, unknown> }).tails.size).toBe(0);
  });
});
