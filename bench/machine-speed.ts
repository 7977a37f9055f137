/**
 * What this run's figures were measured on. These shared 2-core machines
 * change speed from hour to hour (one hashing slot served 4 logins a second one
 * afternoon, about 250 ms a scrypt, and 1 a second two hours later, when a scrypt
 * timed alone took 700-900 ms), which moves every absolute figure and the noise of the
 * ratios: each result file names the commit it ran and a speed probe taken
 * before and after it, so runs can be compared knowing that.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, scryptSync } from 'node:crypto';

const N = 2 ** 17;

/** Median ms of one scrypt at the default login cost (N=2^17, r=8, p=1), on this thread. */
export function scryptProbeMs(samples = 3): number {
  const salt = randomBytes(16);
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const began = performance.now();
    scryptSync('probe', salt, 64, { N, r: 8, p: 1, maxmem: 256 * N * 8 + 1024 * 1024 });
    ms.push(performance.now() - began);
  }
  return ms.sort((a, b) => a - b)[Math.floor(samples / 2)]!;
}

/** The commit the bench ran at, marked when the work tree differs from it. */
export function benchedCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src', 'bench', 'cql', 'package.json'], { encoding: 'utf8' })
      .split('\n')
      .some((line) => line.trim() !== '' && !line.includes('bench/results/'));
    return dirty ? `${head} with uncommitted changes` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
}
