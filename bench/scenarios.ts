/** Seeding and operations the request benchmarks and the profiler share. */

/** How a Parley contender runs unless a scenario measures a setting: as in production, compiled, metrics off. */
export const PRODUCTION_ENV = { NODE_ENV: 'production', METRICS: 'off' };

export const HISTORY_PAGE_QUERY =
  'query Page($name: String!) { room(name: $name) { messages(first: 50) { edges { node { id content author { login } } } } } }';

/** One GraphQL request over HTTP; throws when it returns no data. */
export async function gql(url: string, query: string, variables: Record<string, unknown>, token?: string) {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: Record<string, unknown>; errors?: unknown };
  if (!body.data) throw new Error(`bench setup failed: ${JSON.stringify(body.errors)}`);
  return body.data;
}

/** A new user's token, registered through the API. */
export async function registerUser(url: string, prefix: string): Promise<{ login: string; token: string }> {
  const login = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  const input = { login, password: 'correct horse battery', email: `${login}@example.test`, firstname: 'Bench', lastname: 'User' };
  const { register } = (await gql(url, 'mutation($input: RegisterInput!) { register(input: $input) { token } }', { input })) as {
    register: { token: string };
  };
  return { login, token: register.token };
}

/** A room of 120 messages in one day bucket, posted through the API, and its creator's token. */
export async function seedHistoryPage(url: string): Promise<{ token: string; name: string }> {
  const { token } = await registerUser(url, 'bench_page');
  const name = `page-${Date.now().toString(36)}`;
  await gql(url, 'mutation($name: String!) { createRoom(input: { name: $name }) { name } }', { name }, token);
  for (let i = 0; i < 120; i++) {
    await gql(url, 'mutation($name: String!, $c: String!) { postMessage(roomName: $name, content: $c) { id } }', { name, c: `message ${i}` }, token);
  }
  return { token, name };
}
