// What a client sees of an error: our codes pass, anything unexpected is masked.
import { describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import { mask } from '../../src/server/error-masking.js';

describe('error masking', () => {
  it('labels request errors by kind, and a wrapped failure (a source stream that threw) as internal, never as validation', () => {
    const code = (e: Error) => (e as GraphQLError).extensions?.code;
    expect(code(mask(new GraphQLError('Syntax Error: Unexpected Name "x".')))).toBe('GRAPHQL_PARSE_FAILED');
    expect(code(mask(new GraphQLError('Cannot query field "nope" on type "Query".')))).toBe('GRAPHQL_VALIDATION_FAILED');
    // A variable's scalar that threw is still the client's input.
    const scalarThrew = new GraphQLError('Variable "$at" got invalid value "x"; not a date', { originalError: new TypeError('not a date') });
    expect(code(mask(scalarThrew))).toBe('BAD_USER_INPUT');
    const literalThrew = new GraphQLError('Expected value of type "DateTime!", found "x"; not a date', { originalError: new TypeError('not a date') });
    expect(code(mask(literalThrew))).toBe('GRAPHQL_VALIDATION_FAILED');
    // graphql-tools and our shared execution wrap a source stream's failure without a path.
    const streamFailed = new GraphQLError('socket hang up', { originalError: new Error('socket hang up') });
    expect(code(mask(streamFailed))).toBe('INTERNAL_SERVER_ERROR');
    expect(mask(streamFailed).message).toBe('Unexpected error');
  });
});
