/**
 * A message column added without saying what its deletion does fails here: every column of chat_room_messages, as
 * cql/ makes it, has its entry in deletion.ts, and each entry that says "nulled" is nulled by the deletion's LWT.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DELETION_OF_COLUMN } from '../../../src/resolvers/rooms/messages/deletion.js';

const CQL = new URL('../../../cql/', import.meta.url);

/** The columns of chat_room_messages: its CREATE TABLE's and every ALTER TABLE … ADD's, across cql/ in order. */
function messageColumns(): string[] {
  const columns: string[] = [];
  for (const file of readdirSync(CQL).filter((f) => f.endsWith('.cql')).sort()) {
    const text = readFileSync(new URL(file, CQL), 'utf8').replace(/--.*$/gm, '');
    const created = /CREATE TABLE IF NOT EXISTS chat_room_messages \(([\s\S]*?)PRIMARY KEY/.exec(text);
    if (created) columns.push(...created[1]!.split(',').map((line) => line.trim().split(/\s+/)[0]!).filter(Boolean));
    for (const m of text.matchAll(/ALTER TABLE chat_room_messages ADD (?:IF NOT EXISTS )?(\w+)/g)) columns.push(m[1]!);
  }
  return columns;
}

/** The deletion's LWT (message-edits.ts, DELETE), as its source text has it. */
function deletionStatement(): string {
  const source = readFileSync(new URL('../../../src/db/rooms/messages/message-edits.ts', import.meta.url), 'utf8');
  const statement = /const DELETE = cql\(\s*`([^`]*)`/.exec(source);
  expect(statement, 'the DELETE statement of message-edits.ts').not.toBeNull();
  return statement![1]!;
}

describe("a message's deletion", () => {
  it('says, for every column of chat_room_messages, what it does to it', () => {
    const columns = messageColumns();
    expect(columns.length).toBeGreaterThanOrEqual(19);
    expect([...columns].sort()).toEqual(Object.keys(DELETION_OF_COLUMN).sort());
  });

  it("nulls, in its LWT, each column it says it nulls, and no other", () => {
    const statement = deletionStatement();
    const assignments = /\bSET\b([\s\S]*?)\bWHERE\b/.exec(statement)![1]!;
    const nulledInStatement = [...assignments.matchAll(/(\w+) = null/g)].map((m) => m[1]!).sort();
    const saidNulled = Object.entries(DELETION_OF_COLUMN)
      .filter(([, what]) => what.startsWith('nulled'))
      .map(([column]) => column)
      .sort();
    expect(nulledInStatement).toEqual(saidNulled);
  });
});
