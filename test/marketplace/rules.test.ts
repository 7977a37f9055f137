// The marketplace's pure rules: hour buckets of pending purchases, exact prices, tidy tags.
import { describe, expect, it } from 'vitest';
import { hourBucket, hourBucketsBetween } from '../../src/buckets.js';
import { validTags, validUnitPrice } from '../../src/resolvers/marketplace/validation.js';

describe('hour buckets (pending purchases)', () => {
  it('uses the UTC hour and still fits an int', () => {
    expect(hourBucket(new Date('2026-11-22T23:59:59.999Z'))).toBe(2026112223);
    expect(hourBucket(new Date('2026-11-23T00:00:00Z'))).toBe(2026112300);
    expect(hourBucket(new Date('2099-12-31T23:00:00Z'))).toBeLessThan(2 ** 31);
  });
  it('lists every hour of a range across a day and a year', () => {
    expect(hourBucketsBetween(new Date('2026-12-31T22:30:00Z'), new Date('2027-01-01T01:10:00Z'))).toEqual([
      2026123122, 2026123123, 2027010100, 2027010101,
    ]);
    expect(hourBucketsBetween(new Date('2026-11-22T10:00:00Z'), new Date('2026-11-22T10:00:00Z'))).toEqual([2026112210]);
  });
});

describe('marketplace rules', () => {
  it('keeps prices exactly as written', () => {
    expect(validUnitPrice('p', '19.99').toString()).toBe('19.99');
    expect(validUnitPrice('p', ' 19.90 ').toString()).toBe('19.90');
    expect(() => validUnitPrice('p', '0.001')).toThrow(/at most 12 digits before the point and 2 after/);
    expect(() => validUnitPrice('p', '00.00')).toThrow(/greater than 0/);
  });
  it('stores tags trimmed, lower-case, unique and sorted', () => {
    expect(validTags('t', [' Home', 'home', 'ART'])).toEqual(['art', 'home']);
    // Duplicates are merged before counting: 11 spellings of one tag are one tag.
    expect(validTags('t', Array.from({ length: 11 }, (_, i) => 'Tag'.padEnd(3 + i, ' ')))).toEqual(['tag']);
  });
});
