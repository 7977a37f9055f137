/**
 * The breaking-change guard: schema.graphql against the last release's schema (schema/releases/), with
 * graphql-inspector. Every breaking change, and every dangerous one (a new union member or interface, a new enum
 * value, a changed default, a new argument: what a client that does not program defensively may trip on), must be
 * listed in CHANGELOG.md's Unreleased section, under "Breaking" or "Dangerous", by its path in backticks (with the
 * member it adds or removes, where the path is a whole union or type), with what a client does about it; anything
 * else fails here before it reaches a client.
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

/** The changes from `released` to `current` at one level of criticality. */
async function changesAt(level: CriticalityLevel, released: string, current: string): Promise<Change[]> {
  const changes = await diff(buildSchema(released), buildSchema(current));
  return changes.filter((c) => c.criticality.level === level);
}

/** The breaking changes from `released` to `current`. */
export const breakingChanges = (released: string, current: string) => changesAt(CriticalityLevel.Breaking, released, current);

/** The dangerous changes from `released` to `current`. */
export const dangerousChanges = (released: string, current: string) => changesAt(CriticalityLevel.Dangerous, released, current);

/**
 * The names each item of CHANGELOG.md's Unreleased "### <heading>" list gives in backticks in its subject (the
 * text before its first ": "; what follows is the migration, whose names list nothing).
 */
export function listedUnder(heading: 'Breaking' | 'Dangerous', changelog: string): Array<Set<string>> {
  const unreleased = changelog.split(/^## /m).find((section) => section.startsWith('Unreleased')) ?? '';
  const list = unreleased.split(/^### /m).find((section) => section.startsWith(`${heading}\n`)) ?? '';
  return list
    .split(/^- /m)
    .slice(1)
    .map((item) => new Set([...item.split(/: /)[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)));
}

/** What an item must name to list a change: its path, and the union member or interface it adds or removes. */
function namesOf(change: Change): string[] {
  const meta = change.meta as Record<string, unknown>;
  const member = meta.addedUnionMemberTypeName ?? meta.removedUnionMemberTypeName ?? meta.addedInterfaceName ?? meta.removedInterfaceName;
  return [change.path ?? '', ...(typeof member === 'string' ? [member] : [])];
}

/** The changes no item lists, as "path: message". */
export function unlisted(changes: Change[], items: Array<Set<string>>): string[] {
  return changes
    .filter((c) => !items.some((names) => namesOf(c).every((name) => names.has(name))))
    .map((c) => `${c.path}: ${c.message}`);
}

describe('the breaking-change guard', () => {
  const release = latestRelease(readdirSync(new URL('schema/releases/', root)));

  it('finds no breaking change since the last release that CHANGELOG.md does not list with its migration', async () => {
    const breaking = await breakingChanges(read(`schema/releases/${release}.graphql`), read('schema.graphql'));
    const missing = unlisted(breaking, listedUnder('Breaking', read('CHANGELOG.md')));
    expect(missing, `breaking changes since ${release} not in CHANGELOG.md's Unreleased "Breaking" list`).toEqual([]);
  });

  it('finds no dangerous change since the last release that CHANGELOG.md does not list', async () => {
    const dangerous = await dangerousChanges(read(`schema/releases/${release}.graphql`), read('schema.graphql'));
    const missing = unlisted(dangerous, listedUnder('Dangerous', read('CHANGELOG.md')));
    expect(missing, `dangerous changes since ${release} not in CHANGELOG.md's Unreleased "Dangerous" list`).toEqual([]);
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
    // Named in a migration is not listed: `User.lastname` is only named after the colon of the first item.
    const changelog = '## Unreleased\n\n### Breaking\n\n- `User.bio` removed: read `User.profile.bio`, or `User.lastname`.\n\n## 0.1.0\n';
    expect(unlisted(breaking, listedUnder('Breaking', changelog)).map((line) => line.split(':')[0]).sort()).toEqual(['Query.room.strict', 'User.lastname']);
  });

  it('catches a new enum value, a new union member, a new interface and a changed default, each until its own line lists it', async () => {
    const released = read('schema.graphql');
    const changed = released
      .replace(/^enum PurchaseStatus \{\n/m, 'enum PurchaseStatus {\n  REFUNDED\n')
      .replace(/^union RoomEvent = /m, 'union RoomEvent = Poll | ')
      .replace(/^type Reaction \{/m, 'type Reaction implements Node {\n  id: ID!')
      .replace('messages(after: String, first: Int): MessageConnection\n', 'messages(after: String, first: Int = 20): MessageConnection\n');
    expect(changed).not.toContain('type Reaction {');
    const dangerous = await dangerousChanges(released, changed);
    expect(dangerous.map((c) => c.type).sort()).toEqual(
      ['ENUM_VALUE_ADDED', 'FIELD_ARGUMENT_DEFAULT_CHANGED', 'OBJECT_TYPE_INTERFACE_ADDED', 'UNION_MEMBER_ADDED'].sort(),
    );
    expect(await breakingChanges(released, changed)).toEqual([]);
    // One line per change: the union's path alone, or another member of it, lists no new member.
    const partly = '## Unreleased\n\n### Dangerous\n\n- `PurchaseStatus.REFUNDED` is new: show the purchase as ended.\n- `RoomEvent` gains `PollUpdated`: ignore unknown events.\n\n## 0.1.0\n';
    expect(unlisted(dangerous, listedUnder('Dangerous', partly)).map((line) => line.split(':')[0]).sort()).toEqual(
      ['Reaction', 'RoomEvent', 'User.messages.first'].sort(),
    );
    const whole = `${partly.split('\n\n## 0.1.0')[0]}\n- \`RoomEvent\` gains \`Poll\`; \`Reaction\` implements \`Node\`: ignore what you do not know.\n- \`User.messages.first\` defaults to 20: pass it.\n`;
    expect(unlisted(dangerous, listedUnder('Dangerous', whole))).toEqual([]);
    // A breaking list does not list dangerous changes.
    expect(unlisted(dangerous, listedUnder('Breaking', whole.replace('### Dangerous', '### Breaking')))).toEqual([]);
    expect(unlisted(dangerous, listedUnder('Dangerous', whole.replace('### Dangerous', '### Breaking')))).toHaveLength(4);
  });

  it('lets additions through: a new field, a deprecation', async () => {
    const released = read('schema.graphql');
    const withDeprecation = inType(released, 'User', (body) => body.replace('  bio: String\n', '  bio: String @deprecated(reason: "Use about.")\n  about: String\n'));
    expect(withDeprecation).not.toBe(released);
    expect(await breakingChanges(released, withDeprecation)).toEqual([]);
    expect(await dangerousChanges(released, withDeprecation)).toEqual([]);
  });

  it('takes the newest release by version, not by name', () => {
    expect(latestRelease(['0.9.0.graphql', '0.10.0.graphql', 'README.md', '0.2.1.graphql'])).toBe('0.10.0');
  });
});
