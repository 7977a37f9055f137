/**
 * Load shedding at the door. While every password-hashing slot and place in
 * its queue is taken, a login is refused before anything else is looked at
 * (src/resolvers/accounts/accounts.ts), whatever its arguments and its
 * caller: every run of one login operation is then answered alike. So the
 * JSON fast path answers a prepared operation that is only a login, while
 * the hasher is full, with the answer its last refused run got, without
 * building a context or running it (issue 12: a login storm's overflow cost
 * a context, the compiled code, an error built and located and its JSON per
 * refusal, about a fifth more than the floor's refusal).
 *
 * The answer is always one a run made, so it is the one a run would make;
 * an operation with anything beside the login (another field, a fragment, a
 * directive that may skip it) runs as before.
 */
import { Kind, type ExecutionResult } from 'graphql';
import { PasswordsBusy, type PasswordHasher } from '../auth/password-hasher.js';
import type { Compiled } from './jit-execution.js';

/** Root mutation fields whose use case refuses first while the hasher is full. */
const REFUSED_FIRST_WHILE_HASHER_FULL = new Set(['login']);

export interface Shedding {
  /** Whether every run of `compiled` would now be refused alike. */
  refusesNow(compiled: Compiled): boolean;
  /** Whether `result`, a run of `compiled`, is that refusal: the answer of every run while refusesNow holds. */
  isRefusal(compiled: Compiled, result: ExecutionResult): boolean;
}

export function passwordShedding(passwords: PasswordHasher): Shedding {
  return {
    refusesNow: (compiled) => !passwords.hasRoom() && onlyRefusedFirst(compiled),
    isRefusal: (compiled, result) => result.errors?.length === 1 && isPasswordsBusy(result.errors[0]) && onlyRefusedFirst(compiled),
  };
}

/** A mutation of one field, the login, that nothing can skip. */
function onlyRefusedFirst({ operation }: Compiled): boolean {
  if (operation.operation !== 'mutation') return false;
  const { selections } = operation.selectionSet;
  const only = selections[0]!;
  return selections.length === 1 && only.kind === Kind.FIELD && !only.directives?.length && REFUSED_FIRST_WHILE_HASHER_FULL.has(only.name.value);
}

/** The hasher's refusal, as thrown or as the result's error wrapping it. */
function isPasswordsBusy(error: unknown): boolean {
  return error instanceof PasswordsBusy || (error as { originalError?: unknown } | undefined)?.originalError instanceof PasswordsBusy;
}
