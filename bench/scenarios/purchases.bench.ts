/**
 * The contention scenario of issues 6 and 12, timed: 200 buyers of 1 unit
 * each at once on an item of 50 units, several rounds. Reports wall time per
 * round, bind retries (lost LWT races retried) and CONFLICTs (bound hit).
 */
import { benchApp, stats } from '../kit/harness.js';
import { BuyItemDocument, CreateItemDocument } from '../../test/generated/graphql.js';
import { codes, gql, gqlOk } from '../../test/testkit/http.js';
import { signUp, signUpMany } from '../../test/testkit/data/users.js';

const ROUNDS = 5;
const BUYERS = 200;
const UNITS = 50;

export default async function run(): Promise<string> {
  const app = await benchApp({ env: { CASSANDRA_KEYSPACE: 'parley_bench_market' } });
  try {
    const seller = await signUp(app);
    const buyers = await signUpMany(app, BUYERS, 'bench');
    const runtime = app.services.marketplace;
    const rows: string[] = [];
    const walls: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const now = Date.now();
      const { createItem } = await gqlOk(
        app,
        CreateItemDocument,
        {
          input: {
            name: `Bench item ${round}`,
            unitPrice: '19.99',
            offeredUnits: UNITS,
            startDate: new Date(now - 3_600_000).toISOString(),
            endDate: new Date(now + 86_400_000).toISOString(),
            tags: ['bench'],
          },
        },
        seller.token,
      );
      runtime.stats.maxBindAttempts = 0;
      const before = { ...runtime.stats };
      const started = performance.now();
      const results = await Promise.all(buyers.map((b) => gql(app, BuyItemDocument, { itemId: createItem.id, quantity: 1 }, b.token)));
      const wall = performance.now() - started;
      walls.push(wall);
      const completed = results.filter((r) => r.data?.buyItem?.status === 'COMPLETED').length;
      const notEnough = results.filter((r) => codes(r)[0] === 'NOT_ENOUGH_UNITS').length;
      const conflicts = results.filter((r) => codes(r)[0] === 'CONFLICT').length;
      rows.push(
        `| ${round} | ${wall.toFixed(0)} | ${completed} | ${notEnough} | ${conflicts} | ${runtime.stats.bindRetries - before.bindRetries} | ${runtime.stats.maxBindAttempts} |`,
      );
    }
    const s = stats(walls);
    return [
      `${BUYERS} concurrent buyers of 1 unit on an item of ${UNITS} units, ${ROUNDS} rounds, one app instance, bind bound ${app.services.config.marketplace.bindAttempts} attempts.`,
      '',
      '| round | wall ms | COMPLETED | NOT_ENOUGH_UNITS | CONFLICT | bind retries | most attempts by one buyer |',
      '|---|---|---|---|---|---|---|',
      ...rows,
      '',
      `Wall time (ms): min ${s.min.toFixed(0)}, p50 ${s.p50.toFixed(0)}, max ${s.max.toFixed(0)}.`,
    ].join('\n');
  } finally {
    await app.stop();
  }
}
