/**
 * The spans under an operation's: one per resolver that can reach storage and
 * one per Cassandra request, and how a span records its errors. Set up by
 * src/observability/tracing.ts; the active operation (and its app's tracer) travels
 * in the OpenTelemetry context.
 */
import { context, createContextKey, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_DB_COLLECTION_NAME, ATTR_DB_NAMESPACE, ATTR_DB_OPERATION_BATCH_SIZE, ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_SUMMARY, ATTR_DB_QUERY_TEXT, ATTR_DB_SYSTEM_NAME, ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { isIntrospectionType, isObjectType, responsePathAsArray, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import type { AroundRequest } from '../db/cassandra/client.js';
import { errorCode } from '../server/error-masking.js';

export interface TracedOperation {
  span: Span;
  /** Its app's tracer: resolvers are wrapped in the schema every app shares, so they find it here. */
  tracer: Tracer;
  /** Execution began. An operation refused before (syntax, validation) records the errors of its final result. */
  executed: boolean;
}

export const OPERATION = createContextKey('parley traced GraphQL operation');

export function currentOperation(): TracedOperation | undefined {
  return context.active().getValue(OPERATION) as TracedOperation | undefined;
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
export function traceResolvers(schema: GraphQLSchema): void {
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

export function traced(resolve: GraphQLFieldResolver<unknown, unknown>, spanName: string): GraphQLFieldResolver<unknown, unknown> {
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
export function cqlSpans(tracer: Tracer, keyspace: string): AroundRequest {
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
export function endAfter<T>(span: Span, work: () => T): T {
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
export function recordErrors(span: Span, errors: readonly unknown[] | undefined): void {
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
