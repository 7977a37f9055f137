/**
 * Idempotency keys on every transport: a mutation operation sent with an
 * Idempotency-Key header (HTTP) or extensions.idempotencyKey (HTTP,
 * graphql-ws, SSE) runs once per viewer and key; a retry with the same key
 * and the same operation and variables gets the first answer again
 * (src/resolvers/idempotency/ has the rules, src/db/idempotency/ the rows).
 *
 * An envelop onExecute hook: it sees the built context (the viewer, whose
 * keys they are) and the parsed operation, and runs for Yoga's pipeline and
 * the graphql-ws bridge alike. The JSON fast path sends a request carrying a
 * key through that pipeline (src/server/http/json-fast-path.ts).
 */
import { getOperationAST, GraphQLError, print, type ExecutionResult } from 'graphql';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import type { Services } from '../resolvers/services.js';
import type { Context } from '../resolvers/context.js';
import { IdempotencyKeyStore } from '../db/idempotency/idempotency-keys.js';
import { ANONYMOUS_VIEWER, fingerprintOf, IdempotencyKeys, KEY_EXTENSION, KEY_HEADER, requestedKey } from '../resolvers/idempotency/keys.js';
import { attachKeyedRun, type KeyedRun } from '../resolvers/idempotency/run.js';
import { ErrorCode } from '../errors.js';
import { maskedCode } from './error-masking.js';

/**
 * Answers that are not final: the outcome is unknown (storage did not
 * answer, an unexpected error), or nothing was done and a retry may do it
 * (rate limits, a lost race). They are not kept: the same key runs again.
 */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  ErrorCode.SERVICE_UNAVAILABLE,
  ErrorCode.INTERNAL_SERVER_ERROR,
  ErrorCode.RATE_LIMITED,
  ErrorCode.CONFLICT,
]);

/** What the operation's context holds of its request: Yoga's Request (HTTP) and the GraphQL parameters (every transport). */
interface RequestParts {
  request?: { headers: { get(name: string): string | null } };
  params?: { extensions?: Record<string, unknown> | null };
}

/** Whether an HTTP request carries a key, in its header or its extensions (the JSON fast path asks before running it itself). */
export function carriesIdempotencyKey(headers: Record<string, unknown>, extensions: Record<string, unknown> | null | undefined): boolean {
  return headers[KEY_HEADER.toLowerCase()] !== undefined || (extensions != null && extensions[KEY_EXTENSION] !== undefined);
}

export function useIdempotencyKeys(svc: Services): YogaPlugin {
  const keys = new IdempotencyKeys(new IdempotencyKeyStore(svc.db), svc.clock);
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const parts = args.contextValue as unknown as RequestParts & Context;
      const header = parts.request?.headers.get(KEY_HEADER);
      const extension = parts.params?.extensions?.[KEY_EXTENSION];
      if ((header === null || header === undefined) && extension === undefined) return;
      // An upload's file is not in what the key's fingerprint can compare: uploads take no key (docs/api.md).
      if (parts.request?.headers.get('content-type')?.toLowerCase().startsWith('multipart/')) return;
      // Queries and subscriptions change nothing: a key there is ignored, so a client may send one with every request.
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      let run: KeyedRun;
      try {
        const key = requestedKey(header, extension)!;
        const fingerprint = fingerprintOf(print(args.document), args.operationName, args.variableValues);
        const begun = await keys.begin(parts.viewer?.login ?? ANONYMOUS_VIEWER, key, fingerprint);
        if ('replay' in begun) {
          setResultAndStopExecution(replayed(begun.replay));
          return;
        }
        run = begun.run;
      } catch (err) {
        // Masked as any error is: ours keep their code, storage down becomes SERVICE_UNAVAILABLE.
        setResultAndStopExecution({ errors: [err instanceof GraphQLError ? err : new GraphQLError('idempotency key', { originalError: err as Error })] });
        return;
      }
      attachKeyedRun(parts, run);
      return {
        onExecuteDone: async ({ result }) => {
          const answer = result as ExecutionResult;
          const final = !(answer.errors ?? []).some((e) => RETRYABLE_CODES.has(maskedCode(e)));
          try {
            await keys.finish(run, final ? { final, response: storedAnswer(answer) } : { final });
          } catch (err) {
            // The answer stands; the key stays with this attempt until its lease ends, then a retry takes it over.
            svc.logger.warn({ err, final }, 'could not record the outcome of an idempotency key');
          }
        },
      };
    },
  };
}

/** The answer as kept: data, and each error as its client saw it (message, path, extensions). */
function storedAnswer(result: ExecutionResult): string {
  const errors = result.errors?.map((e) => {
    const { message, path, extensions } = e.toJSON();
    return { message, ...(path ? { path } : {}), ...(extensions ? { extensions } : {}) };
  });
  return JSON.stringify({ data: result.data ?? null, ...(errors ? { errors } : {}) });
}

/** A kept answer as a result, its errors GraphQLErrors again (so masking and the status see them as the first time). */
function replayed(stored: string): ExecutionResult {
  const { data, errors } = JSON.parse(stored) as { data: ExecutionResult['data']; errors?: Array<{ message: string; path?: Array<string | number>; extensions?: Record<string, unknown> }> };
  return {
    data,
    ...(errors ? { errors: errors.map((e) => new GraphQLError(e.message, { path: e.path, extensions: e.extensions })) } : {}),
  };
}
