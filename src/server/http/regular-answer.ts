/**
 * The answer graphql-yoga's regular result processor (processRegularResult)
 * gives a result that is not a stream, byte for byte: its status, its
 * headers and its JSON body, without what made that costly for a result with
 * errors. Yoga serializes a copy of each error without its internal
 * extensions (`http`, `unexpected`): a new GraphQLError, with a copy of its
 * original error made the same way, so two errors built per error, each
 * computing its locations again. Here each error is written as its copy
 * would serialize (GraphQLError's toJSON): message, locations, path, and the
 * extensions left, or, none left, those its original error's copy would have.
 * test/server/json-fast-path.test.ts compares the two on every kind of answer.
 */
import { GraphQLError, type ExecutionResult } from 'graphql';

export interface RegularAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

type Extensions = Record<string, unknown>;

export function regularAnswer(result: ExecutionResult, mediaType: string): RegularAnswer {
  const headers: Record<string, string> = { 'Content-Type': `${mediaType}; charset=utf-8` };
  const status = statusOf(result, headers, mediaType === 'application/json' && specErrorsMayPass(result));
  return { status, headers, body: resultJson(result) };
}

/** As Yoga's stringifier: a result without errors or internal extensions as it is, else a copy without them. */
function resultJson(result: ExecutionResult): string {
  const http = (result.extensions as Extensions | undefined)?.http;
  if (!result.errors?.length && !http) return JSON.stringify(result);
  const copy: Record<string, unknown> = { ...result };
  if (result.errors) copy.errors = result.errors.map(errorJson);
  if (result.extensions) {
    const { http: _http, ...extensions } = result.extensions as Extensions;
    copy.extensions = Object.keys(extensions).length ? extensions : undefined;
  }
  return JSON.stringify(copy);
}

/** What toJSON gives of Yoga's copy of `error`. */
function errorJson(error: unknown): unknown {
  if (!(error instanceof GraphQLError)) return error;
  const json: Record<string, unknown> = { message: error.message };
  // The copy computes its locations from the same source and positions as the error did (jit-execution's
  // located() gives graphql-jit's errors the source and positions of the locations they carry).
  if (error.source && error.positions && error.locations != null) json.locations = error.locations;
  if (error.path != null) json.path = error.path;
  const extensions = copiedExtensions(error);
  if (Object.keys(extensions).length > 0) json.extensions = extensions;
  return json;
}

/**
 * The extensions of Yoga's copy of an error: its own without `http` and
 * `unexpected` when any are left, else those of its original error's copy
 * (GraphQLError takes an original error's extensions when given none).
 */
function copiedExtensions(error: GraphQLError): Extensions {
  const own = (typeof error.toJSON === 'function' ? error.toJSON() : error).extensions as Extensions | undefined;
  if (own) {
    let left: Extensions | undefined;
    for (const key of Object.keys(own)) {
      if (key === 'http' || key === 'unexpected') continue;
      (left ??= {})[key] = own[key];
    }
    if (left) return left;
  }
  const original = error.originalError;
  if (original instanceof GraphQLError) return copiedExtensions(original);
  const theirs = (original as { extensions?: unknown } | undefined)?.extensions;
  return typeof theirs === 'object' && theirs !== null ? (theirs as Extensions) : {};
}

/** Yoga's rule: prefer 200 only when answering application/json and some error is GraphQL's own. */
function specErrorsMayPass(result: ExecutionResult): boolean {
  const errors = result.errors;
  if (!Array.isArray(errors) || errors.length === 0 || !errors.some((e) => e instanceof GraphQLError)) return false;
  return errors.some((e) => {
    const original = (e.extensions as Extensions | undefined)?.originalError;
    return !original || original instanceof GraphQLError;
  });
}

/** Yoga's getResponseInitByRespectingErrors: the status, the errors' `http` headers added to `headers`. */
function statusOf(result: ExecutionResult, headers: Record<string, string>, isApplicationJson: boolean): number {
  let status: number | undefined;
  let unexpectedErrorExists = false;
  const http = (result.extensions as Extensions | undefined)?.http as { headers?: Record<string, string>; status?: number } | undefined;
  if (http) {
    if (http.headers) Object.assign(headers, http.headers);
    if (http.status) status = http.status;
  }
  if (result.errors?.length) {
    for (const error of result.errors) {
      const errorHttp = (error.extensions as Extensions | undefined)?.http as { headers?: Record<string, string>; status?: number; spec?: boolean } | undefined;
      if (errorHttp) {
        if (errorHttp.headers) Object.assign(headers, errorHttp.headers);
        if (isApplicationJson && errorHttp.spec) continue;
        if (errorHttp.status && (!status || errorHttp.status > status)) status = errorHttp.status;
      } else if (!isOriginalGraphQLError(error) || (error.extensions as Extensions | undefined)?.unexpected) {
        unexpectedErrorExists = true;
      }
    }
  } else {
    status ||= 200;
  }
  return status || (unexpectedErrorExists && !('data' in result) ? 500 : 200);
}

function isOriginalGraphQLError(error: unknown): boolean {
  if (!(error instanceof GraphQLError)) return false;
  return error.originalError == null ? true : isOriginalGraphQLError(error.originalError);
}
