/**
 * Load shedding at the door. While every password-hashing slot and place in
 * its queue is taken, a login is refused before anything else is looked at
 * (src/resolvers/accounts/accounts.ts), whatever its arguments: every run of
 * one login operation by an anonymous caller is then answered alike. So the
 * JSON fast path answers such a prepared operation, while the hasher is full,
 * with the answer its last refused run got, without building a context or
 * running it (a login storm's overflow would cost a context, the compiled
 * code, an error built and located and its JSON per refusal, about a fifth
 * more than the floor's refusal).
 *
 * The answer is always one a run made, so it is the one a run would make.
 * What could make a run answer otherwise runs as before: a token sent with
 * the login (a run refuses a bad one first), anything beside the login (another
 * field, a fragment, a directive that may skip it), and arguments or directives
 * inside its selection (a page's size from a variable counts against the cost
 * limit, checked before the login runs).
 */
import type { IncomingMessage } from 'node:http';
import { Kind, type ExecutionResult, type SelectionSetNode } from 'graphql';
import { bearerToken } from '../../auth/authenticate.js';
import { PasswordsBusy, type PasswordHasher } from '../../auth/password-hasher.js';
import type { Compiled } from '../jit-execution.js';

/** Root mutation fields whose use case refuses first while the hasher is full. */
const REFUSED_FIRST_WHILE_HASHER_FULL: ReadonlySet<string> = new Set(['login']);

export interface Shedding {
  /** Whether every run of `compiled` for `req` would now be refused alike. */
  refusesNow(compiled: Compiled, req: IncomingMessage): boolean;
  /** Whether `result`, a run of `compiled`, is that refusal: the answer of every run while refusesNow holds. */
  isRefusal(compiled: Compiled, result: ExecutionResult): boolean;
}

export function passwordShedding(passwords: PasswordHasher): Shedding {
  const sheddable = new WeakMap<Compiled, boolean>();
  const onlyRefusedFirst = (compiled: Compiled) => {
    let known = sheddable.get(compiled);
    if (known === undefined) sheddable.set(compiled, (known = isOnlyRefusedFirst(compiled)));
    return known;
  };
  return {
    refusesNow: (compiled, req) => !passwords.hasRoom() && bearerToken(req.headers.authorization) === null && onlyRefusedFirst(compiled),
    isRefusal: (compiled, result) => result.errors?.length === 1 && isPasswordsBusy(result.errors[0]) && onlyRefusedFirst(compiled),
  };
}

/** A mutation of one field, the login, that nothing can skip, and whose selection takes no arguments. */
function isOnlyRefusedFirst({ operation }: Compiled): boolean {
  if (operation.operation !== 'mutation') return false;
  const { selections } = operation.selectionSet;
  const only = selections[0]!;
  return selections.length === 1 && only.kind === Kind.FIELD && REFUSED_FIRST_WHILE_HASHER_FULL.has(only.name.value) && !only.directives?.length && plainSelection(only.selectionSet);
}

/** Fields only, all the way down: no arguments, no directives, no fragments. */
function plainSelection(set: SelectionSetNode | undefined): boolean {
  return (
    set === undefined ||
    set.selections.every((s) => s.kind === Kind.FIELD && !s.arguments?.length && !s.directives?.length && plainSelection(s.selectionSet))
  );
}

/** The hasher's refusal, as thrown or as the result's error wrapping it. */
function isPasswordsBusy(error: unknown): boolean {
  return error instanceof PasswordsBusy || (error as { originalError?: unknown } | undefined)?.originalError instanceof PasswordsBusy;
}
