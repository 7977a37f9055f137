/**
 * One autocannon run of one request, as every request benchmark measures it:
 * req/s, p99 and the errors, where a response carrying GraphQL errors counts
 * as an error (a contender that answers fast with errors has not served).
 */
import autocannon from 'autocannon';

export interface LoadSample {
  rps: number;
  p99: number;
  errors: number;
  /** Responses received in all (errors included). */
  requests: number;
}

export interface HttpRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export async function loadRequest(req: HttpRequest, connections: number, seconds: number, timeoutSeconds = 10): Promise<LoadSample> {
  let graphqlErrors = 0;
  const r = await autocannon({
    url: req.url,
    connections,
    duration: seconds,
    timeout: timeoutSeconds,
    requests: [{ method: 'POST', body: req.body, headers: req.headers, onResponse: (_status, text) => void (text.includes('"errors"') && graphqlErrors++) }],
  });
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx + graphqlErrors, requests: r.requests.total };
}

/** The GraphQL request of a scenario, with its token. */
export function graphqlRequest(url: string, s: { query: string; variables: Record<string, string>; token: string }): HttpRequest {
  return {
    url: `${url}/graphql`,
    body: JSON.stringify({ query: s.query, variables: s.variables }),
    headers: { 'content-type': 'application/json', ...(s.token ? { authorization: `Bearer ${s.token}` } : {}) },
  };
}

/** The floor's request for a scenario: its variables as the body, at a path named after the scenario (no GraphQL). */
export function floorRequest(url: string, s: { name: string; query: string; variables: Record<string, string>; token: string }): HttpRequest {
  return { ...graphqlRequest(url, s), url: `${url}/${s.name}`, body: JSON.stringify(s.variables) };
}
