/**
 * The breaking-change guard: schema.graphql against the last release's schema (schema/releases/), with
 * graphql-inspector. Every breaking change must be listed, by its path in backticks, in CHANGELOG.md's
 * Unreleased section with its migration; anything else fails here before it reaches a client.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** The latest release's version, by semver order of the files in schema/releases/. */
export function latestRelease(files: string[]): string {
  const versions = files.filter((f) => /^\d+\.\d+\.\d+\.graphql$/.test(f)).map((f) => f.replace(/\.graphql$/, ''));
  const key = (v: string) => v.split('.').map(Number);
  versions.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
  });
  if (versions.length === 0) throw new Error('schema/releases/ holds no release schema');
  return versions.at(-1)!;
}

/** `schema` with `edit` applied to the text of one of its types (`type User {…}`). */
function inType(schema: string, type: string, edit: (body: string) => string): string {
  const start = schema.search(new RegExp(`type ${type}( implements [A-Za-z& ]+)? \\{`));
  const end = schema.indexOf('\n}', start);
  return schema.slice(0, start) + edit(schema.slice(start, end)) + schema.slice(end);
}

/** The breaking changes from `released` to `current`. */
export async function breakingChanges(released: string, current: string): Promise<Change[]> {
  const changes = await diff(buildSchema(released), buildSchema(current));
  return changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking);
}

/** The paths CHANGELOG.md's Unreleased section lists under "Breaking", in backticks. */
export function listedBreaking(changelog: string): Set<string> {
  const unreleased = changelog.split(/^## /m).find((section) => section.startsWith('Unreleased')) ?? '';
  const breaking = unreleased.split(/^### /m).find((section) => section.startsWith('Breaking')) ?? '';
  return new Set([...breaking.matchAll(/^- `([^`]+)`/gm)].map((m) => m[1]!));
}

describe('the breaking-change guard', () => {
  it('finds no breaking change since the last release that CHANGELOG.md does not list with its migration', async () => {
    const release = latestRelease(readdirSync(new URL('schema/releases/', root)));
    const breaking = await breakingChanges(read(`schema/releases/${release}.graphql`), read('schema.graphql'));
    const listed = listedBreaking(read('CHANGELOG.md'));
    const unlisted = breaking.filter((c) => !listed.has(c.path ?? '')).map((c) => `${c.path}: ${c.message}`);
    expect(unlisted, `breaking changes since ${release} not in CHANGELOG.md's Unreleased "Breaking" list`).toEqual([]);
  });

  it('catches a removed field, a new required argument and a narrowed type, and takes one once it is listed', async () => {
    const released = read('schema.graphql');
    const changed = inType(released, 'User', (body) => body.replace(/\n\s+bio: String\n/, '\n').replace('lastname: String!', 'lastname: String'))
      .replace('room(roomName: String!): Room', 'room(roomName: String!, strict: Boolean!): Room');
    const breaking = await breakingChanges(released, changed);
    const paths = breaking.map((c) => c.path);
    expect(paths).toContain('User.bio');
    expect(paths).toContain('Query.room.strict');
    expect(paths).toContain('User.lastname');
    const changelog = '## Unreleased\n\n### Breaking\n\n- `User.bio` removed: read `User.profile.bio`.\n- `User.lastname` may be null: show the login.\n\n## 0.1.0\n';
    expect(breaking.map((c) => c.path).filter((p) => !listedBreaking(changelog).has(p ?? ''))).toEqual(['Query.room.strict']);
  });

  it('lets additions through: a new field, a new optional argument, a deprecation', async () => {
    const released = read('schema.graphql');
    const changed = released
      .replace('room(roomName: String!): Room', 'room(roomName: String!, includeArchived: Boolean): Room');
    const withDeprecation = inType(changed, 'User', (body) => body.replace('  bio: String\n', '  bio: String @deprecated(reason: "Use about.")\n  about: String\n'));
    expect(withDeprecation).not.toBe(changed);
    expect(await breakingChanges(released, withDeprecation)).toEqual([]);
  });

  it('takes the newest release by version, not by name', () => {
    expect(latestRelease(['0.9.0.graphql', '0.10.0.graphql', 'README.md', '0.2.1.graphql'])).toBe('0.10.0');
  });
});
