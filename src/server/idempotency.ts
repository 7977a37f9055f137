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
 * key through that pipeline (src/server/http/json-fast-path.ts). An upload's
 * file counts by its name and the hash of its bytes (src/server/http/files/upload-keys.ts).
 * A logout's retry, whose token its first run revoked, is answered earlier,
 * by an onParams hook: the context (which refuses that token) is never built.
 */
import { getOperationAST, GraphQLError, Kind, parse, print, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import type { Services } from '../resolvers/services.js';
import type { Context } from '../resolvers/context.js';
import { IdempotencyKeyStore } from '../db/idempotency/idempotency-keys.js';
import {
  ANONYMOUS_VIEWER,
  fingerprintOf,
  IdempotencyKeys,
  KEY_EXTENSION,
  KEY_HEADER,
  keptAnswerTooLarge,
  keyReused,
  MAX_KEPT_ANSWER_BYTES,
  requestedKey,
  SESSION_ENDING_MUTATIONS,
} from '../resolvers/idempotency/keys.js';
import { attachKeyedRun, type KeyedRun } from '../resolvers/idempotency/run.js';
import { bearerToken } from '../auth/authenticate.js';
import { ErrorCode } from '../errors.js';
import { maskedCode } from './error-masking.js';
import { KeyedUpload } from './http/files/upload-keys.js';

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
    async onParams({ params, request, setResult }) {
      // Whatever fails here (a token that does not verify, storage), the request goes on as it would without this
      // hook, and its token is judged as usual.
      const kept = await endedSessionAnswer(svc, keys, request, params).catch(() => undefined);
      if (kept !== undefined) setResult(replayed(kept));
    },
    async onExecute({ args, setResultAndStopExecution }) {
      const parts = args.contextValue as unknown as RequestParts & Context;
      const header = parts.request?.headers.get(KEY_HEADER);
      const extension = parts.params?.extensions?.[KEY_EXTENSION];
      if ((header === null || header === undefined) && extension === undefined) return;
      // Queries and subscriptions change nothing: a key there is ignored, so a client may send one with every request.
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      const multipart = parts.request?.headers.get('content-type')?.toLowerCase().startsWith('multipart/') ?? false;
      const upload = multipart ? new KeyedUpload(args.variableValues) : undefined;
      let run: KeyedRun;
      try {
        const key = requestedKey(header, extension)!;
        const fingerprint = fingerprintOf(print(args.document), args.operationName, upload ? upload.fingerprinted : args.variableValues);
        const begun = await keys.begin(parts.viewer?.login ?? ANONYMOUS_VIEWER, key, fingerprint);
        if ('replay' in begun) {
          // An upload's answer is its file's only if the bytes are the same.
          if (upload?.holdsFile && (await upload.readWhole()) !== keptFileOf(begun.replay)) throw keyReused();
          setResultAndStopExecution(replayed(begun.replay));
          return;
        }
        run = begun.run;
      } catch (err) {
        // Masked as any error is: ours keep their code, storage down becomes SERVICE_UNAVAILABLE.
        setResultAndStopExecution({ errors: [err instanceof GraphQLError ? err : new GraphQLError('idempotency key', { originalError: err as Error })] });
        return;
      }
      upload?.hashAsRead();
      attachKeyedRun(parts, run);
      return {
        onExecuteDone: async ({ result }) => {
          const answer = result as ExecutionResult;
          const file = upload?.sha256();
          // An upload refused before its file was read whole has no bytes to compare a retry's with: not kept.
          const final = !(answer.errors ?? []).some((e) => RETRYABLE_CODES.has(maskedCode(e))) && (!upload?.holdsFile || file !== undefined);
          try {
            await keys.finish(run, final ? { final, response: storedAnswer(answer, file) } : { final });
          } catch (err) {
            // The answer stands; the key stays with this attempt until its lease ends, then a retry takes it over.
            svc.logger.warn({ err, final }, 'could not record the outcome of an idempotency key');
          }
        },
      };
    },
  };
}

/** What onParams sees of a request. */
interface ParamsParts {
  request: { headers: { get(name: string): string | null } };
  params: { query?: unknown; operationName?: string | null; variables?: unknown; extensions?: Record<string, unknown> | null };
}

/**
 * The kept answer of a logout (or logoutEverywhere) retried with its key by
 * the token it revoked; undefined for any other request, which goes on as
 * usual (a revoked token is then refused, as without a key). Only those
 * mutations: a token revoked by anything else gets no answer kept for it.
 */
async function endedSessionAnswer(svc: Services, keys: IdempotencyKeys, request: ParamsParts['request'], params: ParamsParts['params']): Promise<string | undefined> {
  const header = request.headers.get(KEY_HEADER);
  const extension = params.extensions?.[KEY_EXTENSION];
  if ((header === null || header === undefined) && extension === undefined) return undefined;
  const token = bearerToken(request.headers.get('authorization'));
  const query = params.query;
  if (!token || typeof query !== 'string') return undefined;
  // The operation first, from the text alone: every other keyed request with a token passes here, and verifying
  // its token and asking whether it was revoked is work its own execution does again.
  if (!mentionsSessionEnding(query)) return undefined;
  const document = parse(query);
  if (!endsSession(document, params.operationName)) return undefined;
  const session = await svc.tokens.verify(token);
  if (!(await svc.revocations.check(session))) return undefined;
  const key = requestedKey(header, extension)!;
  return keys.keptAnswer(session.login, key, fingerprintOf(print(document), params.operationName, params.variables));
}

/** Whether the query's text names a session-ending mutation at all (a cheap test before parsing it). */
function mentionsSessionEnding(query: string): boolean {
  for (const name of SESSION_ENDING_MUTATIONS) if (query.includes(name)) return true;
  return false;
}

/** Whether the operation is a mutation of session-ending fields only. */
function endsSession(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = getOperationAST(document, operationName);
  return (
    operation?.operation === 'mutation' &&
    operation.selectionSet.selections.every((s) => s.kind === Kind.FIELD && SESSION_ENDING_MUTATIONS.has(s.name.value))
  );
}

/** A kept answer, as JSON: the answer, or the size of one too large to keep; and an upload's file's SHA-256. */
interface KeptAnswer {
  data?: ExecutionResult['data'];
  errors?: Array<{ message: string; path?: ReadonlyArray<string | number>; extensions?: Record<string, unknown> }>;
  tooLarge?: number;
  file?: string;
}

/** The answer as kept: data, and each error as its client saw it (message, path, extensions); past MAX_KEPT_ANSWER_BYTES, its size. */
function storedAnswer(result: ExecutionResult, file: string | undefined): string {
  const errors = result.errors?.map((e) => {
    const { message, path, extensions } = e.toJSON();
    return { message, ...(path ? { path } : {}), ...(extensions ? { extensions } : {}) };
  });
  const kept: KeptAnswer = { data: result.data ?? null, ...(errors ? { errors } : {}), ...(file ? { file } : {}) };
  const json = JSON.stringify(kept);
  const bytes = Buffer.byteLength(json);
  return bytes <= MAX_KEPT_ANSWER_BYTES ? json : JSON.stringify({ tooLarge: bytes, ...(file ? { file } : {}) } satisfies KeptAnswer);
}

const keptFileOf = (stored: string) => (JSON.parse(stored) as KeptAnswer).file;

/** A kept answer as a result, its errors GraphQLErrors again (so masking and the status see them as the first time). */
function replayed(stored: string): ExecutionResult {
  const { data, errors, tooLarge } = JSON.parse(stored) as KeptAnswer;
  if (tooLarge !== undefined) return { errors: [keptAnswerTooLarge(tooLarge)] };
  return {
    data,
    ...(errors ? { errors: errors.map((e) => new GraphQLError(e.message, { path: e.path, extensions: e.extensions })) } : {}),
  };
}
