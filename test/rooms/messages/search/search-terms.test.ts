// Search terms: how a message and a query are cut into the words the index holds.
import { describe, expect, it } from 'vitest';
import { messageTerms, queryTerms, termsOf } from '../../../../src/resolvers/rooms/messages/search-terms.js';
import { Limits } from '../../../../src/limits.js';

describe('search terms', () => {
  const fieldOf = (run: () => unknown) => {
    try {
      run();
    } catch (err) {
      return (err as { extensions?: { code?: string; field?: string } }).extensions;
    }
    return undefined;
  };

  it('lowercases, folds compatibility forms, splits on everything but letters, marks and digits, and dedupes', () => {
    expect(termsOf('Hello, WORLD! hello-world… 42nd', 100)).toEqual(['hello', 'world', '42nd']);
    // Fullwidth letters, a ligature and a superscript digit become their plain forms.
    expect(termsOf('ＱＵＯＫＫＡ ﬁsh x²', 100)).toEqual(['quokka', 'fish', 'x2']);
    // Combining marks stay in their word: Devanagari vowel signs, a decomposed accent (composed by NFKC).
    expect(termsOf('नमस्ते café cafe\u0301', 100)).toEqual(['नमस्ते', 'café']);
    expect(termsOf('🎉 -- ... ', 100)).toEqual([]);
  });

  it('cuts long words the same way everywhere and keeps the first terms of a long text', () => {
    const long = 'a'.repeat(Limits.room.search.maxTermLength + 10);
    expect(termsOf(long, 10)).toEqual(['a'.repeat(Limits.room.search.maxTermLength)]);
    expect(queryTerms('query', long)).toEqual(termsOf(long, 10));
    const many = Array.from({ length: Limits.room.search.maxTermsPerMessage + 50 }, (_, i) => `w${i}`).join(' ');
    const terms = messageTerms(many, false);
    expect(terms).toHaveLength(Limits.room.search.maxTermsPerMessage);
    expect(terms[0]).toBe('w0');
    expect(messageTerms('alice joins the room', true)).toEqual([]);
  });

  it('refuses a query without words, with too many words, or too long, naming the field', () => {
    expect(queryTerms('query', 'Quokka? LAKE!')).toEqual(['quokka', 'lake']);
    const tooMany = Array.from({ length: Limits.room.search.maxQueryTerms + 1 }, (_, i) => `w${i}`).join(' ');
    expect(queryTerms('query', tooMany.replace(/ w\d+$/, ''))).toHaveLength(Limits.room.search.maxQueryTerms);
    for (const bad of ['', '   ', '?!', tooMany, 'x'.repeat(Limits.room.search.queryMaxLength + 1)]) {
      expect(fieldOf(() => queryTerms('query', bad)), JSON.stringify(bad)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'query' });
    }
  });
});
