/**
 * OpenTelemetry traces: real operations over HTTP and graphql-ws against the
 * real node, their spans read from the SDK's in-memory exporter.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { startApp, stopApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { eventually } from '../testkit/poll.js';
import { startAppBehindCassandraProxy } from '../testkit/faults/tcp-proxy.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { send } from '../testkit/data/messenger.js';
import { subscribe, wsClient, wsRequest } from '../testkit/ws.js';
import { MeDocument, ProfileUpdatedDocument, UpdateProfileDocument, UserByLoginDocument } from '../generated/graphql.js';
import { profileChannel } from '../../src/resolvers/accounts/accounts.js';

const exporter = new InMemorySpanExporter();
const logs: string[] = [];
let app: App;
let user: TestUser;

beforeAll(async () => {
  app = await startApp({ logs, tracing: { spanProcessor: new SimpleSpanProcessor(exporter) } });
  user = await signUp(app);
});

beforeEach(() => {
  exporter.reset();
  logs.length = 0;
});

/** The finished span named `name`, once exported, and every span of its trace. */
async function traceOf(name: string, from = exporter) {
  const operation = await eventually(() => from.getFinishedSpans().find((s) => s.name === name), { what: `a span named "${name}"` });
  const spans = from.getFinishedSpans().filter((s) => s.spanContext().traceId === operation.spanContext().traceId);
  return { operation, spans };
}

/** The names of a span's parent, its parent's parent, and so on. */
function ancestry(span: ReadableSpan, spans: ReadableSpan[]): string[] {
  const names: string[] = [];
  for (let parentId = span.parentSpanContext?.spanId; parentId; ) {
    const parent = spans.find((s) => s.spanContext().spanId === parentId);
    if (!parent) break;
    names.push(parent.name);
    parentId = parent.parentSpanContext?.spanId;
  }
  return names;
}

const logLines = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe('an operation over HTTP', () => {
  it('is a span every time it runs, once compiled too (with traces on, no operation skips the pipeline)', async () => {
    for (let run = 1; run <= 3; run++) {
      exporter.reset();
      await gqlOk(app, UserByLoginDocument, { login: user.login }, user.token);
      const { spans } = await traceOf('query UserByLogin');
      expect([run, spans.some((s) => s.name === 'graphql.resolve Query.user')]).toEqual([run, true]);
    }
  });

  it('is a span with resolver spans under it, CQL spans under those, one trace, and its trace id on its log lines', async () => {
    await gqlOk(app, MeDocument, {}, user.token);

    const { operation, spans } = await traceOf('query Me');
    expect(operation.kind).toBe(SpanKind.SERVER);
    expect(operation.parentSpanContext).toBeUndefined();
    expect(operation.status.code).toBe(SpanStatusCode.UNSET);
    expect(operation.attributes).toEqual({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'Me' });

    const resolver = spans.find((s) => s.name === 'graphql.resolve Query.me');
    expect(resolver?.parentSpanContext?.spanId).toBe(operation.spanContext().spanId);
    expect(resolver?.attributes['graphql.field.path']).toBe('me');
    // A field computed from its parent alone gets no span.
    expect(spans.map((s) => s.name)).not.toContain('graphql.resolve User.displayName');

    const cql = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(cql.map((s) => s.name)).toContain('SELECT users');
    for (const span of cql) expect(ancestry(span, spans)).toEqual(['graphql.resolve Query.me', 'query Me']);
    expect(cql.find((s) => s.name === 'SELECT users')?.attributes).toMatchObject({
      'db.system.name': 'cassandra',
      'db.system': 'cassandra',
      'db.namespace': inject('keyspace'),
      'db.operation.name': 'SELECT',
      'db.collection.name': 'users',
      'db.query.text': expect.stringMatching(/^SELECT .+ FROM users WHERE login IN \?$/),
    });
    // Nothing else was traced meanwhile: every span is this operation's.
    expect(new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId))).toEqual(new Set([operation.spanContext().traceId]));

    const traced = logLines(logs).filter((line) => line.traceId);
    expect(traced.length).toBeGreaterThan(0);
    const spanIds = spans.map((s) => s.spanContext().spanId);
    for (const line of traced) {
      expect(line.traceId).toBe(operation.spanContext().traceId);
      expect(spanIds).toContain(line.spanId);
    }
  });

  it('makes a batch one span, named by its statements', async () => {
    const partner = await signUp(app);
    exporter.reset();
    await send(app, user, partner, 'a traced message');
    const { spans } = await traceOf('mutation SendDirectMessage');
    const batch = spans.find((s) => s.attributes['db.operation.batch.size']);
    expect(batch?.name).toBe('BATCH INSERT direct_messages UPDATE inbox INSERT inbox_unread');
    expect(batch?.attributes).toMatchObject({ 'db.operation.name': 'BATCH', 'db.operation.batch.size': 4 });
    expect(batch?.attributes['db.query.text']).toMatch(/^INSERT INTO direct_messages .+; UPDATE inbox .+; UPDATE inbox .+; INSERT INTO inbox_unread .+$/);
    expect(JSON.stringify(batch?.attributes)).not.toContain('a traced message');
  });

  it('records a failure by its code, never its message or the input', async () => {
    const secret = 'login-that-must-not-be-traced';
    const res = await gql(app, UserByLoginDocument, { login: secret });
    expect(codes(res)).toEqual(['UNAUTHENTICATED']);

    const { operation, spans } = await traceOf('query UserByLogin');
    expect(operation.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(operation.attributes).toMatchObject({ 'error.type': 'UNAUTHENTICATED', 'graphql.error.codes': ['UNAUTHENTICATED'] });
    const resolver = spans.find((s) => s.name === 'graphql.resolve Query.user');
    expect(resolver?.status.code).toBe(SpanStatusCode.ERROR);
    expect(resolver?.attributes['error.type']).toBe('UNAUTHENTICATED');
    const recorded = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.status, s.events]));
    expect(recorded).not.toContain(secret);
    expect(recorded).not.toContain(res.errors![0]!.message);
  });

  it('refused before execution keeps the conventions\' name for an unknown operation and records the code', async () => {
    expect(codes(await gql(app, '{ me { login '))).toEqual(['GRAPHQL_PARSE_FAILED']);
    const { operation } = await traceOf('GraphQL Operation');
    expect(operation.status.code).toBe(SpanStatusCode.ERROR);
    expect(operation.attributes['graphql.error.codes']).toEqual(['GRAPHQL_PARSE_FAILED']);
  });
});

describe('an operation over graphql-ws', () => {
  it('is a span with the same children', async () => {
    const client = wsClient(app, user.token);
    try {
      const result = await wsRequest(client, MeDocument);
      expect(result.data?.me?.login).toBe(user.login);
    } finally {
      await client.dispose();
    }
    const { operation, spans } = await traceOf('query Me');
    expect(operation.attributes['graphql.operation.name']).toBe('Me');
    const cql = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(cql.length).toBeGreaterThan(0);
    for (const span of cql) expect(ancestry(span, spans)).toEqual(['graphql.resolve Query.me', 'query Me']);
  });

  it('is a span for a subscription that ends once the subscription is set up, while its events keep coming', async () => {
    const client = wsClient(app, user.token);
    try {
      const sub = subscribe(client, ProfileUpdatedDocument, { login: user.login });
      const { operation, spans } = await traceOf('subscription ProfileUpdated');
      expect(operation.attributes['graphql.operation.type']).toBe('subscription');
      expect(ancestry(spans.find((s) => s.name === 'graphql.subscribe Subscription.profileUpdated')!, spans)).toEqual([
        'subscription ProfileUpdated',
      ]);
      await eventually(() => app.services.pubsub.listeners(profileChannel(user.login)) > 0, { what: 'the subscription to listen' });
      await gqlOk(app, UpdateProfileDocument, { input: { bio: 'traced' } }, user.token);
      expect((await sub.next()).data?.profileUpdated.login).toBe(user.login);
      sub.unsubscribe();
    } finally {
      await client.dispose();
    }
  });
});

describe('when Cassandra is unreachable', () => {
  it('marks the CQL, resolver and operation spans with the error class, and the logged error carries the trace id', async () => {
    const cutLogs: string[] = [];
    const cutSpans = new InMemorySpanExporter();
    const { app: cut, proxy } = await startAppBehindCassandraProxy({
      logs: cutLogs,
      tracing: { spanProcessor: new SimpleSpanProcessor(cutSpans) },
    });
    await proxy.close();

    expect(codes(await gql(cut, MeDocument, {}, user.token))).toEqual(['SERVICE_UNAVAILABLE']);
    const { operation, spans } = await traceOf('query Me', cutSpans);
    const errorTypes = (name: string) => spans.filter((s) => s.name === name).map((s) => [s.status.code, s.attributes['error.type']]);
    expect(errorTypes('query Me')).toEqual([[SpanStatusCode.ERROR, 'NoHostAvailableError']]);
    expect(errorTypes('graphql.resolve Query.me')).toEqual([[SpanStatusCode.ERROR, 'NoHostAvailableError']]);
    expect(errorTypes('SELECT users')).toEqual([[SpanStatusCode.ERROR, 'NoHostAvailableError']]);

    const logged = logLines(cutLogs).find((line) => line.msg === 'service unavailable');
    expect(logged?.traceId).toBe(operation.spanContext().traceId);
  });
});

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it('sends spans to the collector over OTLP/HTTP, the last ones when the app stops', async () => {
    const received: string[] = [];
    const collector = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = collector.address() as AddressInfo;
      const exporting = await startApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'parley-otlp-test' } });
      await gqlOk(exporting, MeDocument, {}, user.token);
      await stopApp(exporting);
      expect(received.length).toBeGreaterThan(0);
      for (const request of received) expect(request).toMatch(/^POST \/v1\/traces \{/);
      const sent = received.join('\n');
      expect(sent).toContain('"name":"query Me"');
      expect(sent).toContain('"name":"SELECT users"');
      expect(sent).toContain('{"key":"service.name","value":{"stringValue":"parley-otlp-test"}}');
    } finally {
      collector.closeAllConnections();
      collector.close();
    }
  });
});

describe('without tracing', () => {
  it('an app makes no spans, even with a global tracer provider in the process, and logs no trace ids', async () => {
    const global = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(global)] }));
    try {
      const quietLogs: string[] = [];
      const quiet = await startApp({ logs: quietLogs });
      await gqlOk(quiet, MeDocument, {}, user.token);
      expect(codes(await gql(quiet, UserByLoginDocument, { login: 'nobody' }))).toEqual(['UNAUTHENTICATED']);
      // Its resolvers are wrapped (the schema is shared with the traced app) but trace nothing.
      expect(exporter.getFinishedSpans()).toEqual([]);
      expect(global.getFinishedSpans()).toEqual([]);
      expect(quietLogs.length).toBeGreaterThan(0);
      expect(logLines(quietLogs).filter((line) => 'traceId' in line)).toEqual([]);
    } finally {
      trace.disable();
    }
  });

  it('is off unless an exporter or an OTLP endpoint is set, and OTEL_SDK_DISABLED wins', () => {
    const tracing = (env: Record<string, string>) => loadConfig(env).tracing;
    expect(tracing({})).toEqual({ exporters: [], serviceName: 'parley' });
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toMatchObject({
      exporters: ['otlp'],
      otlpTracesUrl: 'http://collector:4318/v1/traces',
    });
    expect(tracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector/traces' })).toMatchObject({
      exporters: ['otlp'],
      otlpTracesUrl: 'http://collector/traces',
    });
    expect(tracing({ OTEL_TRACES_EXPORTER: 'console,otlp', OTEL_SERVICE_NAME: 'chat' })).toEqual({ exporters: ['console', 'otlp'], serviceName: 'chat' });
    expect(tracing({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).exporters).toEqual([]);
    expect(tracing({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }).exporters).toEqual([]);
    expect(() => tracing({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/zipkin/);
    expect(() => tracing({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/grpc/);
  });
});
