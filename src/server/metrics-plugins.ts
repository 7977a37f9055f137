/**
 * The Yoga plugins that feed the instance's Metrics (src/server/metrics.ts):
 * @graphql-yoga/plugin-prometheus for operations by name and type with their
 * durations, and our own hooks for errors by code (live subscriptions are
 * counted by src/server/live-subscriptions.ts).
 */
import { isAsyncIterable, type Plugin as YogaPlugin } from 'graphql-yoga';
import { createCounter, createHistogram, usePrometheus } from '@graphql-yoga/plugin-prometheus';
import type { IncomingMessage } from 'node:http';
import type { DocumentNode, ExecutionResult } from 'graphql';
import { METRICS_PATH, operationOf, type Metrics } from './metrics.js';

/**
 * The Yoga plugins behind the metrics: none when they are off (then /metrics
 * is an unknown path, 404). /metrics is answered in onRequest, before any
 * GraphQL processing. The same hooks see WebSocket operations, which run
 * through yoga.getEnveloped.
 */
export function useMetrics(metrics: Metrics): YogaPlugin[] {
  if (!metrics.config.enabled) return [];
  return [usePrometheus(prometheusOptions(metrics)), useErrorAndSubscriptionMetrics(metrics)];
}

/** @graphql-yoga/plugin-prometheus with our registry, and our labels (bounded, see operationLabels). */
function prometheusOptions(metrics: Metrics): Parameters<typeof usePrometheus>[0] {
  const { registry } = metrics;
  const labelNames = ['operationName', 'operationType'] as const;
  const byOperation = <Phase>(name: string, help: string, phases: [Phase, ...Phase[]]) =>
    createHistogram<Phase, (typeof labelNames)[number]>({
      registry,
      histogram: { name, help, labelNames },
      fillLabelsFn: (params, context) => metrics.operationLabels(params.document, context),
      phases,
    });
  return {
    registry,
    endpoint: false, // served by useErrorAndSubscriptionMetrics, behind METRICS_TOKEN
    metrics: {
      graphql_envelop_request: createCounter({
        registry,
        counter: {
          name: 'graphql_envelop_request',
          help: 'GraphQL operations run (HTTP and WebSocket); a subscription once it ends',
          labelNames,
        },
        fillLabelsFn: (params, context) => metrics.operationLabels(params.document, context),
        phases: ['execute', 'subscribe'],
      }),
      graphql_envelop_request_duration: byOperation(
        'graphql_envelop_request_duration',
        'Time spent on a GraphQL operation (a subscription: its whole life)',
        ['execute', 'subscribe'],
      ),
      graphql_envelop_phase_parse: byOperation('graphql_envelop_phase_parse', 'Time spent parsing', ['parse']),
      graphql_envelop_phase_validate: byOperation('graphql_envelop_phase_validate', 'Time spent validating', ['validate']),
      graphql_envelop_phase_context: byOperation('graphql_envelop_phase_context', 'Time spent on the context', ['context']),
      graphql_envelop_phase_execute: byOperation('graphql_envelop_phase_execute', 'Time spent executing', ['execute']),
      graphql_envelop_phase_subscribe: byOperation(
        'graphql_envelop_phase_subscribe',
        'A subscription, from subscribing to its end',
        ['subscribe'],
      ),
      graphql_envelop_error_result: createCounter({
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
      }),
      // Timed by Metrics.timeHttpRequests, on whichever path serves the request (the JSON fast path has no onResponse).
      graphql_yoga_http_duration: false,
      // Same numbers as graphql_envelop_request_duration, at a summary's cost on every scrape.
      graphql_envelop_request_time_summary: false,
      // The schema deprecates nothing: this would walk every document for nothing.
      graphql_envelop_deprecated_field: false,
    },
  };
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