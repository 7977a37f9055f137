/**
 * What metrics and tracing cost: the same operation against three instances
 * (plain, METRICS=on, OpenTelemetry tracing exporting over OTLP/HTTP to a
 * local sink), each in its own process, loaded by autocannon in alternating
 * rounds so that all three see the same machine.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { startServerProcess, type ServerProcess } from '../../kit/servers/server-process.js';
import { median } from '../../kit/harness.js';

const ROUNDS = 4;
const SECONDS = 6;
const CONNECTIONS = 16;
const QUERY = JSON.stringify({ query: 'query Me { me { login firstname lastname } }' });

interface Sample {
  rps: number;
  p99: number;
  errors: number;
}

/** An OTLP/HTTP collector stand-in on loopback: accepts span batches and counts them. */
async function otlpSink() {
  let batches = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      batches += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => ({ batches, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function load(url: string, token: string, seconds: number): Promise<Sample> {
  const result = await autocannon({
    url: `${url}/graphql`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: QUERY,
  });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

async function register(url: string): Promise<string> {
  const login = `bench_obs_${Date.now().toString(36)}`;
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation($input: RegisterInput!) { register(input: $input) { token } }',
      variables: { input: { login, password: 'correct horse battery', email: `${login}@example.test`, firstname: 'Bench', lastname: 'Mark' } },
    }),
  });
  const body = (await res.json()) as { data?: { register: { token: string } }; errors?: unknown };
  if (!body.data) throw new Error(`register failed: ${JSON.stringify(body.errors)}`);
  return body.data.register.token;
}

export default async function run(): Promise<string> {
  const sink = await otlpSink();
  const contenders: Array<{ name: string; env: Record<string, string> }> = [
    { name: 'plain', env: { METRICS: 'off' } },
    { name: 'metrics on', env: { METRICS: 'on' } },
    {
      name: 'tracing on (OTLP/HTTP)',
      env: { METRICS: 'off', OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    },
  ];
  const servers: ServerProcess[] = [];
  try {
    for (const c of contenders) servers.push(await startServerProcess(c.env));
    const token = await register(servers[0]!.url);
    // Every contender must really answer the operation (a refused token would be a cheap 200 too).
    for (const s of servers) {
      const res = await fetch(`${s.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: QUERY });
      const body = (await res.json()) as { data?: { me?: { login?: string } } };
      if (!body.data?.me?.login) throw new Error(`contender at ${s.url} did not answer the operation: ${JSON.stringify(body)}`);
    }
    // Warm-up: JIT, connection pools, prepared statements.
    for (const s of servers) await load(s.url, token, 2);
    const samples: Sample[][] = contenders.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < servers.length; i++) samples[i]!.push(await load(servers[i]!.url, token, SECONDS));
    }
    const base = { rps: median(samples[0]!.map((s) => s.rps)), p99: median(samples[0]!.map((s) => s.p99)) };
    const rows = contenders.map((c, i) => {
      const rps = median(samples[i]!.map((s) => s.rps));
      const p99 = median(samples[i]!.map((s) => s.p99));
      const errors = samples[i]!.reduce((n, s) => n + s.errors, 0);
      const each = samples[i]!.map((s) => `${s.rps.toFixed(0)}/${s.p99}`).join(', ');
      return `| ${c.name} | ${rps.toFixed(0)} | ${p99} | ${(rps / base.rps).toFixed(2)} | ${(p99 / base.p99).toFixed(2)} | ${errors} | ${each} |`;
    });
    const spans = sink.received();
    return [
      `\`query Me { me { login firstname lastname } }\` with a token (JWT check + one Cassandra read), autocannon at ` +
        `${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s per contender after a 2 s warm-up each. ` +
        'Each contender is a Parley process of its own; medians over the rounds.',
      '',
      '| contender | req/s | p99 ms | req/s vs plain | p99 vs plain | errors | each round (req/s / p99 ms) |',
      '|---|---|---|---|---|---|---|',
      ...rows,
      '',
      `The OTLP sink received ${spans.batches} span batches (${(spans.bytes / 1e6).toFixed(1)} MB) from the tracing contender.`,
    ].join('\n');
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await sink.close();
  }
}
