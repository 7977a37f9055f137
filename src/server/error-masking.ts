/**
 * What a client sees of an error: our own errors pass with their stable code,
 * request errors (syntax, validation, variables) get a code of their own, and
 * anything else is logged once and masked as INTERNAL_SERVER_ERROR.
 */
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import { ErrorCode } from '../errors.js';

export function maskError(logger: Logger) {
  return (error: unknown): Error => {
    // Duck-typed: graphql can be loaded twice (ESM and CJS), which defeats instanceof.
    if (hasErrorCode(error)) return error as Error;
    if (isRequestError(error)) return withCode(error as GraphQLError, requestErrorCode(error as GraphQLError));
    const original = (error as { originalError?: unknown }).originalError ?? error;
    if (hasErrorCode(original)) return error as Error;
    logger.error({ err: original }, 'unexpected error');
    return new GraphQLError('Unexpected error', {
      extensions: { code: ErrorCode.INTERNAL_SERVER_ERROR },
      path: (error as GraphQLError).path,
    });
  };
}

/**
 * The extensions.code a client sees for an error once maskError has been
 * applied (it is idempotent: a masked error keeps its code). Metrics count
 * errors by it, because their hooks can see an error before masking, and
 * parse and validation errors on WebSocket are never masked.
 */
export function maskedCode(error: unknown): ErrorCode {
  if (hasErrorCode(error)) return errorCode(error) as ErrorCode;
  if (isRequestError(error)) return requestErrorCode(error as GraphQLError);
  const original = (error as { originalError?: unknown }).originalError ?? error;
  return hasErrorCode(original) ? (errorCode(original) as ErrorCode) : ErrorCode.INTERNAL_SERVER_ERROR;
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
 * Errors raised before any resolver ran: syntax, validation, and variables of
 * the wrong type (those carry an originalError from the scalar's parser).
 */
function isRequestError(err: unknown): boolean {
  const e = err as { name?: string; path?: unknown } | undefined;
  return e?.name === 'GraphQLError' && !e.path;
}

function requestErrorCode(err: GraphQLError): ErrorCode {
  if (/^Syntax Error/.test(err.message)) return ErrorCode.GRAPHQL_PARSE_FAILED;
  if (/^Variable "\$/.test(err.message)) return ErrorCode.BAD_USER_INPUT;
  return ErrorCode.GRAPHQL_VALIDATION_FAILED;
}

function withCode(err: GraphQLError, code: ErrorCode): GraphQLError {
  const field = code === ErrorCode.BAD_USER_INPUT ? variableField(err.message) : undefined;
  return new GraphQLError(err.message, {
    nodes: err.nodes,
    source: err.source,
    positions: err.positions,
    extensions: { ...err.extensions, code, ...(field ? { field } : {}) },
  });
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
