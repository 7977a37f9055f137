/** GraphQL over HTTP, as a frontend would send it. */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type GraphQLFormattedError } from 'graphql';
import type { App } from '../../src/app.js';

export interface GqlResult<T> {
  status: number;
  data?: T | null;
  errors?: GraphQLFormattedError[];
}

export async function gql<TResult, TVariables>(
  app: App,
  document: TypedDocumentNode<TResult, TVariables> | string,
  variables?: TVariables,
  token?: string,
  headers: Record<string, string> = {},
): Promise<GqlResult<TResult>> {
  const res = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify({ query: typeof document === 'string' ? document : print(document), variables }),
  });
  const body = (await res.json()) as Omit<GqlResult<TResult>, 'status'>;
  return { status: res.status, ...body };
}

/** The data of a call that must succeed; fails the test with the errors otherwise. */
export async function gqlOk<TResult, TVariables>(
  app: App,
  document: TypedDocumentNode<TResult, TVariables>,
  variables?: TVariables,
  token?: string,
): Promise<TResult> {
  const result = await gql(app, document, variables, token);
  if (result.errors?.length || !result.data) {
    throw new Error(`GraphQL call failed: ${JSON.stringify(result.errors ?? result)}`);
  }
  return result.data;
}

/** The extensions.code of each error, for assertions. */
export const codes = (result: { errors?: readonly GraphQLFormattedError[] }) =>
  (result.errors ?? []).map((e) => e.extensions?.code);

/**
 * An operation written inline as text (one not in test/operations), sent as `user`: its data untyped, for tests that
 * try many small operations, or one the generated documents leave out.
 */
export const gqlAs = (app: App, document: string, variables: Record<string, unknown>, user: { token: string }) =>
  gql(app, document, variables as never, user.token) as Promise<GqlResult<Record<string, unknown>>>;

/** The data of an answer that must have no errors (it throws, showing them, when it has). */
export async function dataOf<T = Record<string, unknown>>(answer: Promise<GqlResult<T>>): Promise<T> {
  const { errors, data } = await answer;
  if (errors?.length || !data) throw new Error(`expected data, got ${JSON.stringify(errors)}`);
  return data;
}
