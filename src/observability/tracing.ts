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
import { context, SpanKind, trace, TraceFlags, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { getOperationAST, type ExecutionArgs } from 'graphql';
import { isAsyncIterable, type Plugin as YogaPlugin, type PromiseOrValue } from 'graphql-yoga';
import type { TracingConfig } from '../config.js';
import type { AroundRequest } from '../db/cassandra/client.js';
import { currentOperation, OPERATION, traceResolvers, cqlSpans, recordErrors, endAfter, type TracedOperation } from './tracing-spans.js';

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

/** The trace and span ids for a log line written inside a recorded span (none outside one, or when not sampled). */
export function traceLogFields(): { traceId?: string; spanId?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return NO_FIELDS;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return traceFlags & TraceFlags.SAMPLED ? { traceId, spanId } : NO_FIELDS;
}

const NO_FIELDS = Object.freeze({});
