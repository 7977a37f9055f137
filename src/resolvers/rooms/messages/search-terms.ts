/**
 * The one rule that turns text into search terms: for the messages indexed
 * (posts and edits) and for the queries that look for them, so both sides
 * always agree on what a word is.
 *
 * NFKC folds compatibility forms (ｆｕｌｌｗｉｄｔｈ, ligatures, superscripts) into
 * plain ones, then lowercasing makes matching case-insensitive. Words are runs
 * of letters, digits and combining marks: the marks stay inside their word
 * because in many scripts (Devanagari, Thai, Arabic with vowel signs) they are
 * part of it, and splitting there would index fragments. Anything else
 * (spaces, punctuation, symbols, emoji) separates words.
 */
import { Limits } from '../../../limits.js';
import { requireLength } from '../../../validation.js';
import { badInput } from '../../../errors.js';

const { search } = Limits.room;
const NOT_WORD = /[^\p{L}\p{M}\p{N}]+/u;

/** The distinct terms of `text`, in order of first appearance, `max` at most. */
export function termsOf(text: string, max: number): string[] {
  const terms = new Set<string>();
  for (const word of text.normalize('NFKC').toLowerCase().split(NOT_WORD)) {
    if (word === '') continue;
    // Cut by code points, the same way on both sides: a longer word still matches itself.
    terms.add(word.length > search.maxTermLength ? [...word].slice(0, search.maxTermLength).join('') : word);
    if (terms.size >= max) break;
  }
  return [...terms];
}

/**
 * What a message is found by. System messages ("… joins the room") are not
 * indexed: they are the server's notices, not what people said, and would
 * flood a search for someone's name.
 */
export function messageTerms(content: string, systemMessage: boolean): string[] {
  return systemMessage ? [] : termsOf(content, search.maxTermsPerMessage);
}

/** A query's terms: at least one, at most maxQueryTerms (BAD_USER_INPUT naming `field` otherwise). */
export function queryTerms(field: string, query: string): string[] {
  requireLength(field, query, 1, search.queryMaxLength);
  const terms = termsOf(query, search.maxQueryTerms + 1);
  if (terms.length === 0) throw badInput(field, `${field} must hold at least one word (letters or digits)`);
  if (terms.length > search.maxQueryTerms) {
    throw badInput(field, `${field} may hold at most ${search.maxQueryTerms} different words`);
  }
  return terms;
}
