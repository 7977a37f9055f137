/**
 * What this run's figures were measured on. These shared 2-core machines
 * change speed from hour to hour (one hashing slot served 4 logins a second one
 * afternoon, about 250 ms a scrypt at N=2^17, r=8, p=1, and 1 a second two hours later, when a scrypt
 * timed alone took 700-900 ms), which moves every absolute figure and the noise of the
 * ratios: each result file names the commit it ran and a speed probe taken
 * before and after it, so runs can be compared knowing that.
 */
import { execFileSync } from 'node:child_process';
import { hashPassword, scryptParams } from '../../src/auth/passwords.js';
import { loadConfig } from '../../src/config.js';

const defaultCost = () => scryptParams(loadConfig({}).auth);

/** The default login cost, as a results file names it: "N=2^14, r=8, p=5". */
export function loginCost(): string {
  const { N, r, p } = defaultCost();
  return `N=2^${Math.log2(N)}, r=${r}, p=${p}`;
}

/** Median ms of one password hash at the default login cost (what the login scenarios' contenders pay), one at a time. */
export async function scryptProbeMs(samples = 3): Promise<number> {
  const params = defaultCost();
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const began = performance.now();
    await hashPassword('probe', params);
    ms.push(performance.now() - began);
  }
  return ms.sort((a, b) => a - b)[Math.floor(samples / 2)]!;
}

/** The commit the bench ran at, marked when the code differs from it (results excepted). */
export function benchedCommit(): string {
  const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
  try {
    const head = git('rev-parse', '--short', 'HEAD');
    const changed = git('status', '--porcelain', '--untracked-files=no', '--', 'src', 'bench', 'cql', 'package.json', ':!bench/results');
    return changed ? `${head} with uncommitted changes` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
}
