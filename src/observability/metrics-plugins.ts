/**
 * The Yoga plugins that feed the instance's Metrics (src/observability/metrics.ts):
 * @graphql-yoga/plugin-prometheus for operations by name and type with their
 * durations, and our own hooks for errors by code (live subscriptions are
 * counted by src/server/live/live-subscriptions.ts).
 */
import { isAsyncIterable, type Plugin as YogaPlugin } from 'graphql-yoga';
import { createCounter, createHistogram, usePrometheus } from '@graphql-yoga/plugin-prometheus';
import type { IncomingMessage } from 'node:http';
import type { DocumentNode, ExecutionResult } from 'graphql';
import { METRICS_PATH, operationOf, type Metrics } from './metrics.js';

/**
 * The metrics of GraphQL operations: the Yoga plugins that keep them, and what
 * an operation run prepared, outside Yoga's pipeline (src/server/http/json-fast-path.ts),
 * adds to the same series. Neither when metrics are off (then /metrics is an
 * unknown path, 404). /metrics is answered in onRequest, before any GraphQL
 * processing. The same hooks see WebSocket operations, which run through
 * yoga.getEnveloped.
 */
export interface OperationMetrics {
  plugins: YogaPlugin[];
  prepared?: PreparedOperationMetrics;
}

export function operationMetrics(metrics: Metrics): OperationMetrics {
  if (!metrics.config.enabled) return { plugins: [] };
  const series = operationSeries(metrics);
  return {
    plugins: [usePrometheus(series.options), useErrorAndSubscriptionMetrics(metrics)],
    prepared: new PreparedOperationMetrics(metrics, series),
  };
}

type OperationSeries = ReturnType<typeof operationSeries>;

/** @graphql-yoga/plugin-prometheus with our registry, and our labels (bounded, see operationLabels). */
function operationSeries(metrics: Metrics) {
  const { registry } = metrics;
  const labelNames = ['operationName', 'operationType'] as const;
  const byOperation = <Phase extends string>(name: string, help: string, phases: [Phase, ...Phase[]]) =>
    createHistogram<Phase, (typeof labelNames)[number]>({
      registry,
      histogram: { name, help, labelNames },
      fillLabelsFn: (params, context) => metrics.operationLabels(params.document, context),
      phases,
    });
  const requests = createCounter<'execute' | 'subscribe', (typeof labelNames)[number]>({
    registry,
    counter: {
      name: 'graphql_envelop_request',
      help: 'GraphQL operations run (HTTP and WebSocket); a subscription once it ends',
      labelNames,
    },
    fillLabelsFn: (params, context) => metrics.operationLabels(params.document, context),
    phases: ['execute', 'subscribe'],
  });
  const duration = byOperation(
    'graphql_envelop_request_duration',
    'Time spent on a GraphQL operation (a subscription: its whole life)',
    ['execute', 'subscribe'],
  );
  const contextPhase = byOperation('graphql_envelop_phase_context', 'Time spent on the context', ['context']);
  const executePhase = byOperation('graphql_envelop_phase_execute', 'Time spent executing', ['execute']);
  const errors = createCounter<'parse' | 'validate' | 'context' | 'execute' | 'subscribe', (typeof labelNames)[number] | 'phase'>({
    registry,
    counter: {
      name: 'graphql_envelop_error_result',
      help: 'Errors by operation and phase (by code: parley_graphql_errors_total)',
      labelNames: [...labelNames, 'phase'],
    },
    fillLabelsFn: (params, context) => ({
      ...metrics.operationLabels(params.document, context),
      phase: params.errorPhase ?? 'execute',
    }),
  });
  const options: Parameters<typeof usePrometheus>[0] = {
    registry,
    endpoint: false, // served by useErrorAndSubscriptionMetrics, behind METRICS_TOKEN
    metrics: {
      graphql_envelop_request: requests,
      graphql_envelop_request_duration: duration,
      // Operations run prepared are neither parsed nor validated again: these count the others.
      graphql_envelop_phase_parse: byOperation('graphql_envelop_phase_parse', 'Time spent parsing (prepared operations are not parsed)', ['parse']),
      graphql_envelop_phase_validate: byOperation('graphql_envelop_phase_validate', 'Time spent validating (prepared operations are not validated)', ['validate']),
      graphql_envelop_phase_context: contextPhase,
      graphql_envelop_phase_execute: executePhase,
      graphql_envelop_phase_subscribe: byOperation(
        'graphql_envelop_phase_subscribe',
        'A subscription, from subscribing to its end',
        ['subscribe'],
      ),
      graphql_envelop_error_result: errors,
      // Timed by Metrics.timeHttpRequests, on whichever path serves the request (the JSON fast path has no onResponse).
      graphql_yoga_http_duration: false,
      // Same numbers as graphql_envelop_request_duration, at a summary's cost on every scrape.
      graphql_envelop_request_time_summary: false,
      // The schema deprecates nothing: this would walk every document for nothing.
      graphql_envelop_deprecated_field: false,
    },
  };
  return { options, requests: requests.counter, duration: duration.histogram, contextPhase: contextPhase.histogram, executePhase: executePhase.histogram, errors: errors.counter };
}

/**
 * An operation the JSON fast path ran prepared (compiled, and parsed and
 * validated by an earlier run through Yoga) counts as the plugins count one
 * run through Yoga: its request, its duration, the context and execute
 * phases, each error of its result (by phase and by code), and its HTTP
 * request's labels. The parse and validate phases it skips are not counted.
 */
export class PreparedOperationMetrics {
  constructor(
    private readonly metrics: Metrics,
    private readonly series: OperationSeries,
  ) {}

  ran(run: PreparedRun & { executeSeconds: number; result: ExecutionResult }): void {
    const labels = this.started(run);
    const { requests, duration, executePhase, errors } = this.series;
    executePhase.observe(labels, run.executeSeconds);
    duration.observe(labels, run.executeSeconds);
    requests.inc(labels);
    const found = run.result.errors;
    if (!found?.length) return;
    for (let i = 0; i < found.length; i++) errors.inc({ ...labels, phase: 'execute' });
    this.metrics.countErrors(found, labels.operationType);
  }

  /** Its context could not be built: one error in the context phase. */
  contextFailed(run: PreparedRun & { error: unknown }): void {
    const labels = this.started(run);
    this.series.errors.inc({ ...labels, phase: 'context' });
    this.metrics.countErrors([run.error], labels.operationType);
  }

  /** Its labels, on its HTTP request too, and the time its context took. */
  private started(run: PreparedRun): { operationName: string; operationType: string } {
    // As the plugins read them: the operation the request's operationName parameter picks.
    const context = { params: { operationName: run.operationName } };
    const labels = this.metrics.operationLabels(run.document, context);
    this.metrics.httpOperationParsed(run.req, run.document, context);
    this.series.contextPhase.observe(labels, run.contextSeconds);
    return labels;
  }
}

interface PreparedRun {
  req: IncomingMessage;
  document: DocumentNode;
  operationName: string | null | undefined;
  contextSeconds: number;
}

function useErrorAndSubscriptionMetrics(metrics: Metrics): YogaPlugin {
  // Known once the document is validated; read when building the context fails.
  const operationTypes = new WeakMap<object, string>();
  const typeOf = (document: DocumentNode, context: unknown) => operationOf(document, context)?.operation ?? 'unknown';
  const countResult = (result: unknown, operationType: string) =>
    metrics.countErrors((result as ExecutionResult | undefined)?.errors, operationType);
  const eachSubscriptionResult = { onNext: ({ result }: { result: unknown }) => countResult(result, 'subscription') };
  const subscriptionHooks = {
    onSubscribeResult: ({ result }: { result: unknown }) =>
      isAsyncIterable(result) ? eachSubscriptionResult : countResult(result, 'subscription'),
    onSubscribeError: ({ error }: { error: unknown }) => metrics.countErrors([error], 'subscription'),
  };
  return {
    onRequest({ url, request, fetchAPI, endResponse }) {
      if (url.pathname !== METRICS_PATH) return undefined;
      return metrics.scrape(request, fetchAPI).then(endResponse);
    },
    onPluginInit({ registerContextErrorHandler }) {
      registerContextErrorHandler(({ context, error }) => metrics.countErrors([error], operationTypes.get(context)));
    },
    instrumentation: {
      // Around parsing, hooks included: Yoga's cache throws a parse error it has seen before from a hook,
      // and then no onParse hook sees the result.
      parse: (_payload, parse) => {
        try {
          parse();
        } catch (err) {
          metrics.countErrors([err]);
          throw err;
        }
      },
    },
    // What an HTTP request's duration is labelled with (Metrics.timeHttpRequests), from the request itself: both paths have it.
    onParse: ({ context }) => ({ result }) => {
      const req = (context as { req?: IncomingMessage }).req;
      if (req && result && !(result instanceof Error)) metrics.httpOperationParsed(req, result as DocumentNode, context);
    },
    onValidate: ({ context, params }) => {
      const operationType = typeOf(params.documentAST, context);
      operationTypes.set(context, operationType);
      return ({ valid, result }) => {
        if (!valid) metrics.countErrors(result, operationType);
      };
    },
    onExecute: ({ args }) => {
      const operationType = typeOf(args.document, args.contextValue);
      return {
        onExecuteDone: ({ result }) => {
          if (!isAsyncIterable(result)) return countResult(result, operationType);
          return { onNext: ({ result }) => countResult(result, operationType) };
        },
      };
    },
    // The same hooks for every subscription: envelop keeps what these return for the stream's life.
    onSubscribe: () => subscriptionHooks,
  };
}

// The driver checks `instanceof RequestTracker`, a class its typings declare as an interface.