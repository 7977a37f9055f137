/**
 * OpenTelemetry traces, opt-in through the standard OTEL_* variables (read in
 * src/config.ts): a span per GraphQL operation, child spans for the resolvers
 * that can reach storage and for each request sent to Cassandra, and the
 * trace id on the log lines written meanwhile.
 *
 * Each app instance has a tracer provider of its own (never the API's global
 * one), so two apps in one process never mix spans. When tracing is off none
 * of this is installed: no plugin, no CQL hook, no wrapped resolver (unless
 * another app in the same process traces, see traceResolvers), and log lines
 * pay one lookup of an active span that is never there.
 */
import {
  context,
  createContextKey,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_BATCH_SIZE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_QUERY_SUMMARY,
  ATTR_DB_QUERY_TEXT,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_SERVICE_NAME,
} from '@opentelemetry/semantic-conventions';
import {
  getOperationAST,
  isIntrospectionType,
  isObjectType,
  responsePathAsArray,
  type ExecutionArgs,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { isAsyncIterable, type Plugin as YogaPlugin, type PromiseOrValue } from 'graphql-yoga';
import type { TracingConfig } from '../config.js';
import type { AroundRequest } from '../db/cassandra/client.js';
import { errorCode } from './error-masking.js';

export interface Tracing {
  /** Operation and resolver spans; goes first among Yoga's plugins so it wraps the others. */
  plugin: YogaPlugin;
  /** Given to the Database: a span per statement, batch or LWT sent to Cassandra. */
  aroundCql: AroundRequest;
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

/**
 * The instance's tracing, or undefined when it is off. `spanProcessor`, when
 * given, replaces the configured exporters (tests read spans from memory).
 */
export function startTracing(config: TracingConfig, keyspace: string, spanProcessor?: SpanProcessor): Tracing | undefined {
  const spanProcessors = spanProcessor ? [spanProcessor] : config.exporters.map((exporter) => exporterProcessor(exporter, config));
  if (spanProcessors.length === 0) return undefined;
  registerAsyncContextOnce();
  // The sampler is the SDK's, from OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (default: parentbased_always_on).
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName })),
    spanProcessors,
  });
  const tracer = provider.getTracer('parley');
  return {
    plugin: useOperationSpans(tracer),
    aroundCql: cqlSpans(tracer, keyspace),
    shutdown: () => provider.shutdown(),
  };
}

function exporterProcessor(exporter: TracingConfig['exporters'][number], config: TracingConfig): SpanProcessor {
  // The OTLP exporter reads its other OTEL_EXPORTER_OTLP_* variables (headers, timeout) itself, the batch
  // processor its OTEL_BSP_* ones. Console output is for a developer watching: no batching.
  return exporter === 'otlp'
    ? new BatchSpanProcessor(new OTLPTraceExporter({ url: config.otlpTracesUrl }))
    : new SimpleSpanProcessor(new ConsoleSpanExporter());
}

/**
 * Spans nest across awaits only through a context manager, and the
 * OpenTelemetry API holds one per process. The first app that traces
 * registers it for the life of the process; later apps find it there.
 */
let asyncContextRegistered = false;

function registerAsyncContextOnce(): void {
  if (asyncContextRegistered) return;
  const manager = new AsyncLocalStorageContextManager().enable();
  // False when something else in the process registered one already: that one serves.
  if (!context.setGlobalContextManager(manager)) manager.disable();
  asyncContextRegistered = true;
}

/** The GraphQL operation being traced, found in the active context by its resolvers and hooks. */
interface TracedOperation {
  span: Span;
  /** Its app's tracer: resolvers are wrapped in the schema every app shares, so they find it here. */
  tracer: Tracer;
  /** Execution began. An operation refused before (syntax, validation) records the errors of its final result. */
  executed: boolean;
}

const OPERATION = createContextKey('parley traced GraphQL operation');

function currentOperation(): TracedOperation | undefined {
  return context.active().getValue(OPERATION) as TracedOperation | undefined;
}

/**
 * A span per operation, named as the OpenTelemetry GraphQL conventions say:
 * "{type} {name}" ("query Me"), with graphql.operation.type and .name. The
 * document is not recorded: its literals can hold anything a client typed.
 *
 * Over HTTP and SSE the span covers the whole operation (parsing, validation,
 * context, execution) and ends when its result is ready. Over graphql-ws our
 * bridge parses and validates by itself, so the span starts at execution.
 * A subscription's span ends once the subscription is set up; the events it
 * then delivers are not traced.
 */
function useOperationSpans(tracer: Tracer): YogaPlugin {
  const inNewOperation = (wrapped: () => PromiseOrValue<void>) => inOperationSpan(tracer, wrapped);
  const inOperation = (wrapped: () => PromiseOrValue<void>) => (currentOperation() ? wrapped() : inNewOperation(wrapped));
  const recordExecutionErrors = (operation: TracedOperation | undefined, result: unknown) => {
    if (operation && !isAsyncIterable(result)) recordErrors(operation.span, (result as { errors?: readonly unknown[] }).errors);
  };
  return {
    instrumentation: {
      operation: (_payload, wrapped) => inNewOperation(wrapped),
      execute: (_payload, wrapped) => inOperation(wrapped),
      subscribe: (_payload, wrapped) => inOperation(wrapped),
    },
    onSchemaChange: ({ schema }) => traceResolvers(schema),
    onExecute: ({ args }) => {
      const operation = nameOperation(args);
      return { onExecuteDone: ({ result }) => recordExecutionErrors(operation, result) };
    },
    onSubscribe: ({ args }) => {
      const operation = nameOperation(args);
      return { onSubscribeResult: ({ result }) => recordExecutionErrors(operation, result) };
    },
    onExecutionResult: ({ result }) => {
      const operation = currentOperation();
      if (operation && !operation.executed && result && !isAsyncIterable(result)) recordErrors(operation.span, result.errors);
    },
  };
}

function inOperationSpan(tracer: Tracer, wrapped: () => PromiseOrValue<void>): PromiseOrValue<void> {
  // Renamed once the operation is known; this is the conventions' name for one that never gets that far.
  const span = tracer.startSpan('GraphQL Operation', { kind: SpanKind.SERVER });
  const operation: TracedOperation = { span, tracer, executed: false };
  return context.with(trace.setSpan(context.active(), span).setValue(OPERATION, operation), () => endAfter(span, wrapped));
}

function nameOperation(args: ExecutionArgs): TracedOperation | undefined {
  const operation = currentOperation();
  if (!operation) return undefined;
  operation.executed = true;
  const definition = operation.span.isRecording() ? getOperationAST(args.document, args.operationName) : null;
  if (definition) {
    const type = definition.operation;
    const name = definition.name?.value;
    operation.span.updateName(name ? `${type} ${name}` : type);
    operation.span.setAttribute('graphql.operation.type', type);
    if (name) operation.span.setAttribute('graphql.operation.name', name);
  }
  return operation;
}

/**
 * Resolver spans, named "graphql.resolve Type.field", for the resolvers that
 * can reach storage: every root field's (and a root subscription field's
 * subscribe), and every other field whose resolver, as written in
 * src/schema/, takes the context, the only way to storage (a user's loader,
 * a room's messages). A field computed from its parent alone ("displayName",
 * a connection's "edges") gets none: spans for each scalar of a page would
 * cost more than they tell.
 *
 * The schema is one module-level object shared by every app in the process,
 * so its resolvers are wrapped in place, once (the first traced app does it;
 * they stay wrapped). A wrapper finds the tracer in the operation it runs in:
 * in an operation of an app that does not trace there is none, and it calls
 * straight through.
 */
function traceResolvers(schema: GraphQLSchema): void {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || isIntrospectionType(type)) continue;
    const isRoot = roots.has(type);
    for (const field of Object.values(type.getFields())) {
      // Pothos keeps the resolver as written; the one in the schema may be wrapped by its plugins.
      const written = (field.extensions as { pothosOriginalResolve?: unknown }).pothosOriginalResolve ?? field.resolve;
      const takesContext = typeof written === 'function' && written.length >= 3;
      if (field.resolve && (isRoot || takesContext)) field.resolve = traced(field.resolve, `graphql.resolve ${type.name}.${field.name}`);
      if (field.subscribe && isRoot) field.subscribe = traced(field.subscribe, `graphql.subscribe ${type.name}.${field.name}`);
    }
  }
}

const TRACED = Symbol('resolver wrapped for tracing');

function traced(resolve: GraphQLFieldResolver<unknown, unknown>, spanName: string): GraphQLFieldResolver<unknown, unknown> {
  if (TRACED in resolve) return resolve;
  const wrapper: GraphQLFieldResolver<unknown, unknown> = (source, args, ctx, info) => {
    const operation = currentOperation();
    // Not in an operation this app traces, or one the sampler left out: no span to make.
    if (!operation?.span.isRecording()) return resolve(source, args, ctx, info);
    const span = operation.tracer.startSpan(spanName, {
      attributes: { 'graphql.field.path': responsePathAsArray(info.path).join('.') },
    });
    return context.with(trace.setSpan(context.active(), span), () => endAfter(span, () => resolve(source, args, ctx, info)));
  };
  return Object.assign(wrapper, { [TRACED]: true });
}

/**
 * A CLIENT span per request to Cassandra, named by its query summary as the
 * database conventions say ("SELECT users", "BATCH INSERT purchases UPDATE
 * items"). The prepared CQL is constant text with ? for every value, so it is
 * recorded; the values never are. Only requests made within a traced span get
 * one: start-up, recovery runs and revocation reloads would each be a trace
 * of a single span.
 */
function cqlSpans(tracer: Tracer, keyspace: string): AroundRequest {
  return (cql, send) => {
    if (!trace.getSpan(context.active())?.isRecording()) return send();
    const { name, attributes } = describeCql(cql, keyspace);
    return endAfter(tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }), send);
  };
}

/** The span name and attributes of one statement, or of a batch (an array). */
function describeCql(cql: string | readonly string[], keyspace: string): { name: string; attributes: Attributes } {
  const isBatch = typeof cql !== 'string';
  const parts = (isBatch ? cql : [cql]).map(summarize);
  const shared = (values: Array<string | undefined>) => (new Set(values).size === 1 ? values[0] : undefined);
  const operation = shared(parts.map((p) => p.operation));
  const table = shared(parts.map((p) => p.table));
  const summary = [...new Set(parts.map((p) => (p.table ? `${p.operation} ${p.table}` : p.operation)))].join(' ');
  const name = isBatch ? `BATCH ${summary}` : summary;
  const attributes: Attributes = {
    [ATTR_DB_SYSTEM_NAME]: 'cassandra',
    // The attribute's name before semantic conventions 1.30, still the one many backends read.
    'db.system': 'cassandra',
    [ATTR_DB_NAMESPACE]: keyspace,
    // A batch's is "BATCH", or "BATCH INSERT" when its statements share their operation.
    [ATTR_DB_OPERATION_NAME]: isBatch ? (operation ? `BATCH ${operation}` : 'BATCH') : parts[0]!.operation,
    [ATTR_DB_QUERY_SUMMARY]: name,
    [ATTR_DB_QUERY_TEXT]: parts.map((p) => p.text).join('; '),
  };
  if (table) attributes[ATTR_DB_COLLECTION_NAME] = table;
  if (isBatch) attributes[ATTR_DB_OPERATION_BATCH_SIZE] = parts.length;
  return { name, attributes };
}

/** "SELECT a, b FROM users WHERE …" → SELECT on users; also INSERT INTO t, UPDATE t, DELETE … FROM t. */
function summarize(cql: string): { operation: string; table?: string; text: string } {
  const text = cql.replace(/\s+/g, ' ').trim();
  const operation = /^(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'CQL';
  const table = /^(?:SELECT\b.*?\bFROM|INSERT INTO|UPDATE|DELETE\b.*?\bFROM) ("?[\w.]+"?)/i.exec(text)?.[1];
  return { operation, table, text };
}

/** Runs `work`, ending `span` when it settles; a failure marks the span with its kind, never its message. */
function endAfter<T>(span: Span, work: () => T): T {
  let result: T;
  try {
    result = work();
  } catch (err) {
    fail(span, err);
    span.end();
    throw err;
  }
  if (!isThenable(result)) {
    span.end();
    return result;
  }
  return result.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      fail(span, err);
      span.end();
      throw err;
    },
  ) as T;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

function fail(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute(ATTR_ERROR_TYPE, errorKind(err));
}

/**
 * An operation's errors: status ERROR, error.type the first one's kind and
 * graphql.error.codes every kind, never a message (it can quote a client's input).
 */
function recordErrors(span: Span, errors: readonly unknown[] | undefined): void {
  if (!errors?.length) return;
  const kinds = [...new Set(errors.map(errorKind))];
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute(ATTR_ERROR_TYPE, kinds[0]!);
  span.setAttribute('graphql.error.codes', kinds);
}

/**
 * An error's stable code (extensions.code, ours or a GraphQL error's), or for
 * one without (what clients see masked as INTERNAL_SERVER_ERROR, a driver
 * error) the class of what was thrown, e.g. NoHostAvailableError.
 */
function errorKind(err: unknown): string {
  const original = (err as { originalError?: unknown } | undefined)?.originalError ?? err;
  const code = errorCode(err) ?? errorCode(original);
  if (typeof code === 'string') return code;
  return original instanceof Error ? original.constructor.name : typeof original;
}

/**
 * traceId and spanId for the logger's mixin, when a line is written within a
 * span whose trace is recorded. Without tracing there is never an active span,
 * and this is one lookup that finds none.
 */
export function traceLogFields(): { traceId?: string; spanId?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return NO_FIELDS;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return traceFlags & TraceFlags.SAMPLED ? { traceId, spanId } : NO_FIELDS;
}

const NO_FIELDS = Object.freeze({});
