/** Seeding and operations the request benchmarks and the profiler share. */
import type { App } from '../src/app.js';
import { post, roomWith } from '../test/testkit/rooms.js';
import { signUp } from '../test/testkit/users.js';

/** How a Parley contender runs unless a scenario measures a setting: as in production, compiled, metrics off. */
export const PRODUCTION_ENV = { NODE_ENV: 'production', METRICS: 'off' };

export const HISTORY_PAGE_QUERY =
  'query Page($name: String!) { room(name: $name) { messages(first: 50) { edges { node { id content author { login } } } } } }';

/** A server in another process, as the testkit's clients (which need only its address) take it. */
export const remoteApp = (url: string) => ({ url }) as App;

/** A room of 120 messages in one day bucket, posted through the API, and its creator's token. */
export async function seedHistoryPage(url: string): Promise<{ token: string; name: string }> {
  const app = remoteApp(url);
  const user = await signUp(app);
  const name = await roomWith(app, user);
  for (let i = 0; i < 120; i++) await post(app, user, name, `message ${i}`);
  return { token: user.token, name };
}
