/**
 * Queries and mutations are compiled by graphql-jit on their second run
 * (GRAPHQL_JIT). A client cannot tell: every run of an operation answers as an
 * instance that never compiles answers it (data, errors with their messages,
 * paths, codes and fields, HTTP status), over HTTP and over graphql-ws. And
 * the third run of each operation that can be compiled is compiled code
 * (counted below, as graphql-jit hands it out), while the other instance
 * never runs any.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { App } from '../../src/app.js';
import {
  BuyItemDocument,
  CreateItemDocument,
  CreateRoomDocument,
  DeleteRoomDocument,
  HistoryDocument,
  ItemDocument,
  JoinRoomDocument,
  MeDocument,
  RoomParticipantsFullDocument,
  UpdateProfileDocument,
} from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { gql, gqlOk } from '../testkit/http.js';
import { createItem, itemInput } from '../testkit/data/marketplace.js';
import { post, roomWith, uniqueRoomName } from '../testkit/data/rooms.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { wsClient, wsRequest } from '../testkit/ws.js';

/**
 * Runs of code graphql-jit compiled, in every instance of this file. No
 * instance tells what it compiled (src/server/jit-execution.ts keeps it to
 * itself), so graphql-jit's compiled queries are counted as they run.
 */
const jitRuns = vi.hoisted(() => ({ count: 0 }));
vi.mock('graphql-jit', async (importOriginal) => {
  const jit = await importOriginal<typeof import('graphql-jit')>();
  const compileQuery = (...args: Parameters<typeof jit.compileQuery>) => {
    const compiled = jit.compileQuery(...args);
    // Else an ExecutionResult: graphql-jit's refusal to compile.
    if ('query' in compiled) {
      const { query } = compiled;
      compiled.query = (...run: Parameters<typeof query>) => {
        jitRuns.count += 1;
        return query(...run);
      };
    }
    return compiled;
  };
  return { ...jit, compileQuery };
});

let compiling: App;
let interpreting: App;
let alice: TestUser;
let bob: TestUser;
let room: string;
let itemId: string;
const missingRoom = uniqueRoomName('none');

beforeAll(async () => {
  // One keyspace: both instances read the same rows.
  compiling = await startApp();
  interpreting = await startApp({ env: { GRAPHQL_JIT: 'off' } });
  alice = await signUp(compiling);
  bob = await signUp(compiling);
  await gqlOk(compiling, UpdateProfileDocument, { input: { bio: 'Curiouser and curiouser' } }, alice.token);
  room = await roomWith(compiling, alice, [bob]);
  await post(compiling, bob, room, 'hello');
  itemId = (await createItem(compiling, alice)).id;
});

interface Case {
  what: string;
  document: TypedDocumentNode<unknown, Record<string, unknown>> | string;
  /** Read when the case runs: the rows they name are made in beforeAll. */
  variables?: () => Record<string, unknown>;
  token?: () => string;
  /**
   * Whether its runs, once it is compiled, are graphql-jit's code: not when its variables do not coerce
   * (Yoga's executor answers them) nor when it is never compiled (a non-null variable's default, no operation picked).
   */
  compiled: boolean;
}

const doc = (d: unknown) => d as TypedDocumentNode<unknown, Record<string, unknown>>;

const cases: Case[] = [
  // Participants are stored people whose other fields are promises; dates, decimals, lists and fragments.
  { what: 'stored people with loaded fields', document: doc(RoomParticipantsFullDocument), variables: () => ({ roomName: room }), token: () => alice.token, compiled: true },
  // Without cursors: each carries the time of its read.
  {
    what: 'a page of history',
    document: 'query ($roomName: String!) { room(roomName: $roomName) { messages(first: 10) { edges { node { id content createdAt author { login bio } } } pageInfo { hasNextPage } } } }',
    variables: () => ({ roomName: room }),
    token: () => bob.token,
    compiled: true,
  },
  { what: 'an item with a decimal price and dates', document: doc(ItemDocument), variables: () => ({ itemId }), token: () => bob.token, compiled: true },
  { what: 'no session', document: doc(MeDocument), compiled: true },
  // Variables the schema refuses, each with its message, input path and HTTP status.
  { what: 'an Int given as text', document: doc(HistoryDocument), variables: () => ({ roomName: room, first: 'ten' }), token: () => bob.token, compiled: false },
  { what: 'a required variable left out', document: doc(HistoryDocument), variables: () => ({}), token: () => bob.token, compiled: false },
  { what: 'an Int out of range', document: doc(BuyItemDocument), variables: () => ({ itemId, quantity: 2 ** 31 }), token: () => bob.token, compiled: false },
  { what: 'an input field out of the type', document: doc(CreateRoomDocument), variables: () => ({ input: { name: 'abc', color: 'red' } }), token: () => bob.token, compiled: false },
  { what: 'a required input field left out', document: doc(CreateRoomDocument), variables: () => ({ input: {} }), token: () => bob.token, compiled: false },
  // graphql-jit alone would take [] for an input object whose fields are all optional, and run the mutation.
  { what: 'a list for an input object', document: doc(UpdateProfileDocument), variables: () => ({ input: [] }), token: () => alice.token, compiled: false },
  // graphql-jit alone would say a required variable with a default was not provided.
  {
    what: 'a required variable with a default, left out',
    document: 'query ($roomName: String!, $first: Int! = 2) { room(roomName: $roomName) { messages(first: $first) { edges { node { content } } } } }',
    variables: () => ({ roomName: room }),
    token: () => bob.token,
    compiled: false,
  },
  { what: 'a DateTime that is no date', document: doc(CreateItemDocument), variables: () => ({ input: { ...itemInput(), endDate: '2026-02-30T10:00:00Z' } }), token: () => bob.token, compiled: false },
  // Our own errors, from use cases and from the cost limit.
  { what: 'a room that does not exist', document: doc(JoinRoomDocument), variables: () => ({ roomName: missingRoom }), token: () => bob.token, compiled: true },
  { what: 'a deletion by someone else', document: doc(DeleteRoomDocument), variables: () => ({ roomName: room }), token: () => bob.token, compiled: true },
  {
    what: 'an operation over the cost limit',
    document: 'query ($roomName: String!) { room(roomName: $roomName) { participants { messages(first: 5) { edges { node { id } } } } } }',
    variables: () => ({ roomName: room }),
    token: () => alice.token,
    compiled: true,
  },
  { what: 'two operations and no name', document: 'query A { me { login } } query B { me { bio } }', token: () => alice.token, compiled: false },
];

describe('an operation run again and again', () => {
  it.each(cases.map((c) => [c.what, c] as const))('answers %s over HTTP as an instance that never compiles', async (_what, c) => {
    const jitRunsBefore = jitRuns.count;
    const expected = await gql(interpreting, c.document, c.variables?.(), c.token?.());
    expect(jitRuns.count, 'compiled code run by the instance that never compiles').toBe(jitRunsBefore);
    const compiledRuns: number[] = [];
    for (let run = 1; run <= 3; run++) {
      const before = jitRuns.count;
      expect(await gql(compiling, c.document, c.variables?.(), c.token?.()), `run ${run}`).toEqual(expected);
      compiledRuns.push(jitRuns.count - before);
    }
    // By its third run an operation is compiled, whatever ran it before (beforeAll, an earlier case).
    expect(compiledRuns[2], 'compiled code run by the third run').toBe(c.compiled ? 1 : 0);
  });

  it('answers the same over graphql-ws', async () => {
    /** Three runs of `c` on `app`, and how many ran compiled code. */
    const viaWs = async (app: App, c: Case) => {
      const client = wsClient(app, c.token?.());
      try {
        const results = [];
        const compiledRuns = [];
        for (let run = 1; run <= 3; run++) {
          const before = jitRuns.count;
          results.push(await wsRequest(client, c.document as TypedDocumentNode<unknown, Record<string, unknown>>, c.variables?.()));
          compiledRuns.push(jitRuns.count - before);
        }
        return { results, compiledRuns };
      } finally {
        await client.dispose();
      }
    };
    for (const c of cases.filter((x) => typeof x.document !== 'string')) {
      const interpreted = await viaWs(interpreting, c);
      expect(interpreted.compiledRuns, `${c.what}: compiled code run by the instance that never compiles`).toEqual([0, 0, 0]);
      const [expected] = interpreted.results;
      const compiled = await viaWs(compiling, c);
      expect(compiled.results, c.what).toEqual([expected, expected, expected]);
      expect(compiled.compiledRuns[2], `${c.what}: compiled code run by the third run`).toBe(c.compiled ? 1 : 0);
    }
  });
});
