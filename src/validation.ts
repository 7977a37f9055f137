/**
 * The input rule set. Each check throws BAD_USER_INPUT naming the field, so
 * clients can attach the message to the right form control.
 */
import { badInput } from './errors.js';
import { Limits } from './limits.js';

export function requireLength(field: string, value: string, min: number, max: number): string {
  // A lone UTF-16 surrogate is not text: the driver would store U+FFFD instead, so two different inputs
  // (say two clientMessageIds) would become one.
  if (!value.isWellFormed()) throw badInput(field, `${field} is not well-formed Unicode text`);
  // A code point is 1 or 2 UTF-16 units: reject hopeless sizes before counting (and copying) a huge string.
  const length = value.length > max * 2 ? Infinity : [...value].length; // count code points, not UTF-16 units
  if (length < min || length > max) {
    throw badInput(field, min === max ? `${field} must be ${min} characters` : `${field} must be ${min}–${max} characters`);
  }
  return value;
}

export function validLogin(field: string, login: string): string {
  requireLength(field, login, Limits.login.min, Limits.login.max);
  if (!Limits.login.pattern.test(login)) {
    throw badInput(field, `${field} may hold only a–z, 0–9, '.', '_' and '-'`);
  }
  return login;
}

/** Whether a string could name an account: anything else names nobody and never reaches Cassandra. */
export function isPossibleLogin(login: string): boolean {
  return login.length >= Limits.login.min && login.length <= Limits.login.max && Limits.login.pattern.test(login);
}

export function validPassword(field: string, password: string): string {
  return requireLength(field, password, Limits.password.min, Limits.password.max);
}

export function validName(field: string, name: string): string {
  const trimmed = name.trim();
  return requireLength(field, trimmed, Limits.name.min, Limits.name.max);
}

export function validBio(field: string, bio: string): string {
  return requireLength(field, bio.trim(), 0, Limits.bio.max);
}

// Deliberately simple: one "@", a dot in the domain, no spaces. Deliverability is checked by mail, not regex.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function validEmail(field: string, email: string): string {
  const trimmed = email.trim();
  requireLength(field, trimmed, 3, Limits.email.max);
  if (!EMAIL.test(trimmed)) throw badInput(field, `${field} must be an email address`);
  return trimmed.toLowerCase();
}

/** Page size for a connection: default when absent, 1..max otherwise (Limits.page unless the connection has its own). */
export function pageSize(
  field: string,
  first: number | null | undefined,
  limit: { default: number; max: number } = Limits.page,
): number {
  if (first === null || first === undefined) return limit.default;
  if (!Number.isInteger(first) || first < 1 || first > limit.max) {
    throw badInput(field, `${field} must be between 1 and ${limit.max}`);
  }
  return first;
}

/** A client-chosen idempotency key (clientMessageId, clientPurchaseId): optional; null when absent. */
export function validClientId(field: string, id: string | null | undefined): string | null {
  if (id == null) return null;
  requireLength(field, id, Limits.clientId.min, Limits.clientId.max);
  // Control characters have no place in an identifier and would make logs ambiguous.
  if (/\p{Cc}/u.test(id)) throw badInput(field, `${field} must not contain control characters`);
  return id;
}

/** JSON text of `value` when it is custom data (a JSON object within Limits.metadata); null for null; BAD_USER_INPUT otherwise. */
export function validMetadata(field: string, value: unknown): string | null {
  if (value === null) return null;
  const { maxBytes, maxDepth } = Limits.metadata;
  if (typeof value !== 'object' || Array.isArray(value)) throw badInput(field, `${field} must be a JSON object`);
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    // Nested past what stringify can walk: far past the depth allowed.
    throw badInput(field, `${field} nests at most ${maxDepth} levels`);
  }
  if (Buffer.byteLength(text) > maxBytes) throw badInput(field, `${field} holds at most ${maxBytes} bytes of JSON`);
  // Within 4 KB now: a walk of every value is short.
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (depth > maxDepth) throw badInput(field, `${field} nests at most ${maxDepth} levels`);
    for (const child of Object.values(v)) pending.push([child, depth + 1]);
  }
  return text;
}
