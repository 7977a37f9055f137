/**
 * Login timing at the default (production) scrypt cost: an unknown login and a wrong
 * password must take about the same time, so response time does not tell an
 * attacker which logins exist. Also the cost of one hash.
 */
import { benchApp, DEFAULT_SCRYPT_COST, stats } from '../kit/harness.js';
import { loginCost } from '../kit/machine-speed.js';
import { LoginDocument } from '../../test/generated/graphql.js';
import { gql } from '../../test/testkit/http.js';
import { signUp, uniqueLogin } from '../../test/testkit/data/users.js';

const SAMPLES = 40;

export default async function run(): Promise<string> {
  // The production cost, and limits out of the way: this measures hashing, not throttling.
  const app = await benchApp({
    env: { ...DEFAULT_SCRYPT_COST, LOGIN_FAILURES_PER_LOGIN: '1000000', LOGIN_FAILURES_PER_ADDRESS: '1000000' },
  });
  try {
    const user = await signUp(app);
    const time = async (login: string, password: string) => {
      const started = performance.now();
      await gql(app, LoginDocument, { login, password });
      return performance.now() - started;
    };
    const unknown: number[] = [];
    const wrong: number[] = [];
    const right: number[] = [];
    // Interleaved, one at a time, so both kinds see the same machine load.
    for (let i = 0; i < SAMPLES; i++) {
      unknown.push(await time(uniqueLogin('ghost'), 'some-password'));
      wrong.push(await time(user.login, 'not-the-password'));
      right.push(await time(user.login, user.password));
    }
    const row = (label: string, s: number[]) => {
      const x = stats(s);
      return `| ${label} | ${x.n} | ${x.min.toFixed(1)} | ${x.p50.toFixed(1)} | ${x.p95.toFixed(1)} | ${x.max.toFixed(1)} |`;
    };
    const gap = Math.abs(stats(unknown).p50 - stats(wrong).p50);
    return [
      `scrypt at the default cost (${loginCost()}), one request at a time over HTTP.`,
      '',
      '| login attempt | n | min ms | p50 ms | p95 ms | max ms |',
      '|---|---|---|---|---|---|',
      row('unknown login', unknown),
      row('wrong password', wrong),
      row('right password', right),
      '',
      `Median gap between an unknown login and a wrong password: ${gap.toFixed(1)} ms ` +
        `(${((gap / stats(wrong).p50) * 100).toFixed(1)} % of a failed login).`,
    ].join('\n');
  } finally {
    await app.stop();
  }
}
