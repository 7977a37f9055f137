/**
 * Input rules of the marketplace. Each check throws BAD_USER_INPUT naming the
 * field, like the shared rules in src/validation.ts.
 */
import { BigDecimal } from '../../db/cassandra/client.js';
import { badInput } from '../../errors.js';
import { Limits } from '../../limits.js';
import { requireLength } from '../../validation.js';

const { unitPrice: PRICE } = Limits.item;
// Digits only, so "1e3", "-1", " 12" or "0x10" never reach BigDecimal (which would accept some of them).
const DECIMAL = new RegExp(`^\\d{1,${PRICE.integerDigits}}(\\.\\d{1,${PRICE.scale}})?$`);

/** A price: a positive decimal string with at most 2 decimals, kept exactly as written ("19.90" stays "19.90"). */
export function validUnitPrice(field: string, raw: string): BigDecimal {
  const text = raw.trim();
  if (!DECIMAL.test(text)) {
    throw badInput(
      field,
      `${field} must be a decimal string with at most ${PRICE.integerDigits} digits before the point and ${PRICE.scale} after, e.g. "19.99"`,
    );
  }
  if (/^[0.]+$/.test(text)) throw badInput(field, `${field} must be greater than 0`);
  return BigDecimal.fromString(text);
}

export function validIntIn(field: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw badInput(field, `${field} must be a whole number from ${min} to ${max.toLocaleString('en')}`);
  }
  return value;
}

/** Tags are matched case-insensitively: stored trimmed and lower-case, duplicates merged. */
export function normalizeTag(tag: string): string {
  return tag.trim().toLowerCase();
}

export function validTags(field: string, tags: readonly string[]): string[] {
  const unique = [...new Set(tags.map(normalizeTag))];
  unique.forEach((tag) => requireLength(field, tag, Limits.item.tag.min, Limits.item.tag.max));
  if (unique.length > Limits.item.tags.max) throw badInput(field, `${field} may hold at most ${Limits.item.tags.max} tags`);
  return unique.sort();
}

export function validItemName(field: string, name: string): string {
  return requireLength(field, name.trim(), Limits.item.name.min, Limits.item.name.max);
}

export function validDescription(field: string, description: string): string {
  return requireLength(field, description.trim(), 0, Limits.item.description.max);
}

