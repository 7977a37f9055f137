import { GraphQLError, Kind } from 'graphql';
import { ErrorCode } from '../../errors.js';
import { builder } from '../shared/builder.js';

const notAString = () =>
  new GraphQLError('Decimal must be a string such as "19.99"', { extensions: { code: ErrorCode.BAD_USER_INPUT } });

/**
 * Money as an exact decimal string. Input stays a string here (a JSON number
 * would already be a float); the use case checks its form and naming the field.
 */
export const DecimalRef = builder.scalarType('Decimal', {
  description: 'An exact decimal amount carried as a string, e.g. "19.99"; never a float',
  serialize: (value) => (typeof value === 'string' ? value : value.toString()),
  parseValue: (value) => {
    if (typeof value !== 'string') throw notAString();
    return value;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw notAString();
    return ast.value;
  },
});
