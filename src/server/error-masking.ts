/**
 * What a client sees of an error: our own errors pass with their stable code,
 * request errors (syntax, validation, variables) get a code of their own, and
 * anything else is logged once and masked as INTERNAL_SERVER_ERROR.
 */
import { GraphQLError, type GraphQLErrorExtensions } from 'graphql';
import type { Logger } from 'pino';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import { ErrorCode, unavailable, withoutStackTrace } from '../errors.js';
import { isStorageUnavailable } from '../db/cassandra/client.js';
import { isRedisUnavailable } from '../pubsub/redis-connection.js';

/**
 * Also the one place errors are logged, each once: a client's mistake at info
 * (with its code; the request id comes from the logger's mixin), anything
 * unexpected at error with its stack. Yoga's own error lines are demoted to
 * debug (src/observability/logging.ts), so a client cannot flood the error log.
 */
export function maskError(logger: Logger) {
  return (error: unknown): Error => {
    const masked = mask(error);
    const code = errorCode(masked);
    const cause = causeOf(error);
    if (code === ErrorCode.SERVICE_UNAVAILABLE) {
      const service = (masked as { extensions?: { service?: unknown } }).extensions?.service;
      logger.warn({ code, service, err: describeError(cause) }, 'service unavailable');
    } else if (code === ErrorCode.INTERNAL_SERVER_ERROR) {
      logger.error({ err: cause, code }, 'unexpected error');
    } else {
      logger.info({ code, ...fieldOf(masked) }, 'client error');
    }
    return masked;
  };
}

/**
 * Validation errors are returned as the result, never thrown, so they never
 * reach maskError: log them here, once, as the client mistakes they are.
 */
export function useValidationErrorLog(logger: Logger): YogaPlugin {
  return {
    onValidate: () => ({ valid, result }) => {
      if (!valid) logger.info({ code: errorCode(result[0]) ?? ErrorCode.GRAPHQL_VALIDATION_FAILED }, 'client error');
    },
  };
}

/**
 * A request Yoga cannot read (a GET whose `variables` or `extensions` is not
 * JSON, say) throws a plain error from the request parser; it is the client's
 * mistake, answered 400 BAD_REQUEST, not an internal error.
 */
export function useRequestParseErrors(): YogaPlugin {
  return {
    onRequestParse: ({ requestParser, setRequestParser }) => {
      if (!requestParser) return;
      setRequestParser(async (request) => {
        try {
          return await requestParser(request);
        } catch (err) {
          if ((err as { name?: unknown }).name === 'GraphQLError') throw err;
          throw new GraphQLError('Malformed request: its parameters could not be read', {
            extensions: { code: ErrorCode.BAD_REQUEST, http: { status: 400 } },
          });
        }
      });
    },
  };
}

/** The error a client sees, with a stable code; logs nothing (maskError logs). */
export function mask(error: unknown): Error {
  // Yoga's BAD_REQUEST errors carry the JSON parser's message, which quotes the body: rebuilt without it.
  if (errorCode(error) === ErrorCode.BAD_REQUEST) return withCode(error as GraphQLError, ErrorCode.BAD_REQUEST);
  // Duck-typed: graphql can be loaded twice (ESM and CJS), which defeats instanceof.
  if (hasErrorCode(error)) return error as Error;
  if (isRequestError(error)) return withCode(error as GraphQLError, requestErrorCode(error as GraphQLError));
  const original = causeOf(error);
  if (hasErrorCode(original)) return error as Error;
  const service = unavailableService(original);
  // What the client is told, in place of the error (whose own stack maskError logs).
  if (service) {
    const { message, extensions } = unavailable(service);
    return withoutStackTrace(() => new GraphQLError(message, { extensions, path: (error as GraphQLError).path }));
  }
  return withoutStackTrace(
    () =>
      new GraphQLError('Unexpected error', {
        extensions: { code: ErrorCode.INTERNAL_SERVER_ERROR },
        path: (error as GraphQLError).path,
      }),
  );
}

/** What was thrown: graphql wraps a resolver's error in a GraphQLError that keeps it as originalError. */
const causeOf = (error: unknown): unknown => (error as { originalError?: unknown }).originalError ?? error;

/** Which backing service an error says is down, if it says so. */
function unavailableService(err: unknown): 'storage' | 'pubsub' | undefined {
  if (isStorageUnavailable(err)) return 'storage';
  if (isRedisUnavailable(err)) return 'pubsub';
  return undefined;
}

function describeError(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function fieldOf(error: Error): { field?: unknown } {
  const field = (error as { extensions?: { field?: unknown } }).extensions?.field;
  return field === undefined ? {} : { field };
}

/**
 * The extensions.code a client sees for an error once masked (masking keeps
 * a masked error's code). Metrics count errors by it, because their hooks can
 * see an error before masking.
 */
export function maskedCode(error: unknown): ErrorCode {
  return errorCode(mask(error)) as ErrorCode;
}

/**
 * graphql-armor throws its limit errors from parse and validate, without a
 * code. Turn them into QUERY_TOO_COMPLEX errors reported like any validation
 * error, on HTTP and WebSocket alike. Must come after the armor plugin.
 */
export function useLimitErrorCodes(): YogaPlugin {
  const LIMIT = /(depth limit|aliases limit|token limit|directives limit)/i;
  const tag = (err: unknown) =>
    err instanceof Error && LIMIT.test(err.message)
      ? new GraphQLError(err.message.replace(/^Syntax Error: /, ''), {
          extensions: { code: ErrorCode.QUERY_TOO_COMPLEX },
        })
      : err;
  return {
    onParse: ({ parseFn, setParseFn }) => {
      setParseFn((source, opts) => {
        try {
          return parseFn(source, opts);
        } catch (err) {
          // graphql's parser is recursive: a list literal nested thousands deep, a few KB
          // and inside the token limit, exhausts the stack before any depth rule can run.
          if (err instanceof RangeError) {
            throw new GraphQLError('The operation is nested too deeply', { extensions: { code: ErrorCode.QUERY_TOO_COMPLEX } });
          }
          throw tag(err);
        }
      });
    },
    onValidate: ({ validateFn, setValidationFn }) => {
      setValidationFn((...args) => {
        try {
          return validateFn(...args);
        } catch (err) {
          const tagged = tag(err);
          if (tagged !== err) return [tagged as GraphQLError];
          // graphql's SingleFieldSubscriptionsRule evaluates directives, and throws for `@skip` without
          // its argument instead of reporting it: that is the document's fault, a validation error.
          if ((err as { name?: unknown }).name === 'GraphQLError') {
            const e = err as GraphQLError;
            return [new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: ErrorCode.GRAPHQL_VALIDATION_FAILED } })];
          }
          throw err;
        }
      });
    },
  };
}

/** An error that carries one of our stable codes. */
export function hasErrorCode(err: unknown): boolean {
  const code = errorCode(err);
  return typeof code === 'string' && code in ErrorCode;
}

export function errorCode(err: unknown): unknown {
  return (err as { extensions?: { code?: unknown } } | undefined)?.extensions?.code;
}

/**
 * An error in the request itself: a GraphQLError located nowhere in the
 * result (syntax, validation, variables). One that wraps a thrown error is a
 * request error only when a scalar's parser threw it, for a variable or for a
 * literal: a subscription's source stream failing is wrapped without a path
 * too, and is no mistake of the client's query.
 */
function isRequestError(err: unknown): boolean {
  const e = err as { name?: string; path?: unknown; originalError?: { name?: unknown }; message?: string } | undefined;
  if (e?.name !== 'GraphQLError' || e.path) return false;
  if (!e.originalError || e.originalError.name === 'GraphQLError') return true;
  const message = e.message ?? '';
  return VARIABLE_ERROR.test(message) || LITERAL_ERROR.test(message);
}

/** graphql-js's message for a variable that does not coerce (a scalar's parseValue may have thrown). */
const VARIABLE_ERROR = /^Variable "\$/;
/** graphql-js's message for a literal a scalar's parseLiteral refused (validation). */
const LITERAL_ERROR = /^Expected value of type /;

function requestErrorCode(err: GraphQLError): ErrorCode {
  if (/^Syntax Error/.test(err.message)) return ErrorCode.GRAPHQL_PARSE_FAILED;
  if (VARIABLE_ERROR.test(err.message)) return ErrorCode.BAD_USER_INPUT;
  return ErrorCode.GRAPHQL_VALIDATION_FAILED;
}

function withCode(err: GraphQLError, code: ErrorCode): GraphQLError {
  const field = code === ErrorCode.BAD_USER_INPUT ? variableField(err.message) : undefined;
  return withoutStackTrace(
    () =>
      new GraphQLError(err.message, {
        nodes: err.nodes,
        source: err.source,
        positions: err.positions,
        // Only the HTTP status of Yoga's extensions is kept: its originalError quotes what the client sent.
        extensions: { ...httpOf(err), code, ...(field ? { field } : {}) },
      }),
  );
}

function httpOf(err: GraphQLError): Pick<GraphQLErrorExtensions, 'http'> {
  const http = err.extensions?.http;
  return http === undefined ? {} : { http };
}

/**
 * The input a variable error is about, named like our own field paths:
 * 'Variable "$input" got invalid value … at "input.unitPrice"; …' → "input.unitPrice",
 * 'Variable "$login" of required type …' → "login".
 */
function variableField(message: string): string | undefined {
  const nested = /^Variable "\$[^"]+" got invalid value .*? at "([^"]+)";/s.exec(message);
  if (nested) return nested[1];
  const variable = /^Variable "\$([^"]+)"/.exec(message)?.[1];
  const missing = /; Field "([^"]+)" of required type .* was not provided\.$/s.exec(message)?.[1];
  return variable && missing ? `${variable}.${missing}` : variable;
}
