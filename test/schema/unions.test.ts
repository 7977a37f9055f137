/** Every union and interface of schema.graphql (Node aside) can be read whole without aliases: a document selecting each member's every field validates. */
import { readFileSync } from 'node:fs';
import {
  Kind,
  NoUnusedFragmentsRule,
  buildSchema,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isRequiredArgument,
  isRequiredInputField,
  parse,
  specifiedRules,
  validate,
  visit,
  type DocumentNode,
  type GraphQLAbstractType,
  type GraphQLArgument,
  type GraphQLCompositeType,
  type GraphQLInputType,
  type GraphQLObjectType,
  type InlineFragmentNode,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/project-root.js';

/** Composite fields nested this deep below a member select only __typename. */
const MAX_DEPTH = 3;

// The committed schema: test/schema/schema.test.ts checks it matches the code-first one.
const schema = buildSchema(readFileSync(projectPath('schema.graphql'), 'utf8'));

/** A literal of the argument's type: "x", 1, 1.0, true, an enum's first value, required input fields, [one]. */
function literal(type: GraphQLInputType): string {
  if (isNonNullType(type)) return literal(type.ofType);
  if (isListType(type)) return `[${literal(type.ofType)}]`;
  if (isEnumType(type)) return type.getValues()[0]!.name;
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields()).filter(isRequiredInputField);
    return `{${fields.map((f) => `${f.name}: ${literal(f.type)}`).join(', ')}}`;
  }
  switch (type.name) {
    case 'Int':
      return '1';
    case 'Float':
      return '1.0';
    case 'Boolean':
      return 'true';
    default:
      return '"x"'; // String, ID and custom scalars (buildSchema's scalars take any literal)
  }
}

/** The field's required arguments filled in; optional ones (first, after…) are left out. */
function args(fieldArgs: readonly GraphQLArgument[]): string {
  const required = fieldArgs.filter(isRequiredArgument);
  return required.length ? `(${required.map((a) => `${a.name}: ${literal(a.type)}`).join(', ')})` : '';
}

/** Every field of an object type, composite ones recursed into; `path` holds the types above, to cut cycles. */
function objectSelection(type: GraphQLObjectType, depth: number, path: ReadonlySet<string>): string {
  const inside = new Set(path).add(type.name);
  return Object.values(type.getFields())
    .map((field) => {
      const named = getNamedType(field.type);
      const head = `${field.name}${args(field.args)}`;
      if (!isCompositeType(named)) return head;
      if (depth >= MAX_DEPTH || inside.has(named.name)) return `${head} { __typename }`;
      return `${head} { ${selection(named, depth + 1, inside)} }`;
    })
    .join(' ');
}

/** An object's fields, or for a union or interface an inline fragment per possible type. */
function selection(type: GraphQLCompositeType, depth: number, path: ReadonlySet<string>): string {
  if (!isAbstractType(type)) return objectSelection(type, depth, path);
  const inside = new Set(path).add(type.name);
  const members = schema.getPossibleTypes(type).map((member) => {
    const body = inside.has(member.name) ? '__typename' : objectSelection(member, depth, inside);
    return `... on ${member.name} { ${body} }`;
  });
  return ['__typename', ...members].join(' ');
}

interface RootPath {
  operation: 'query' | 'subscription' | 'mutation';
  fields: string[]; // each `name(requiredArgs…)`
}

/** The shortest chain of object fields from a root type to a field returning `target`, or undefined. */
function rootPath(target: GraphQLAbstractType): RootPath | undefined {
  const roots = [
    ['query', schema.getQueryType()],
    ['subscription', schema.getSubscriptionType()],
    ['mutation', schema.getMutationType()],
  ] as const;
  const queue: Array<{ type: GraphQLObjectType; at: RootPath }> = [];
  const seen = new Set<string>();
  for (const [operation, type] of roots) {
    if (type) queue.push({ type, at: { operation, fields: [] } });
  }
  while (queue.length) {
    const { type, at } = queue.shift()!;
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      const next = { operation: at.operation, fields: [...at.fields, `${field.name}${args(field.args)}`] };
      if (named === target) return next;
      if (isObjectType(named) && !seen.has(named.name) && !isRootType(named)) {
        seen.add(named.name);
        queue.push({ type: named, at: next });
      }
    }
  }
  return undefined;
}

const isRootType = (type: GraphQLObjectType) =>
  type === schema.getQueryType() || type === schema.getSubscriptionType() || type === schema.getMutationType();

interface Generated {
  name: string;
  type: GraphQLAbstractType;
  /** The abstract type's selection set on its own, as `{ … }`. */
  selection: string;
  source: string;
  document: DocumentNode;
  rules: readonly ValidationRule[];
}

function generate(type: GraphQLAbstractType): Generated {
  const body = selection(type, 0, new Set());
  const path = rootPath(type);
  if (path) {
    const source = `${path.operation} { ${path.fields.map((f) => `${f} { `).join('')}${body}${' }'.repeat(path.fields.length)} }`;
    return { name: type.name, type, selection: `{ ${body} }`, source, document: parse(source), rules: specifiedRules };
  }
  const source = `fragment All on ${type.name} { ${body} }`;
  const rules = specifiedRules.filter((rule) => rule !== NoUnusedFragmentsRule);
  return { name: type.name, type, selection: `{ ${body} }`, source, document: parse(source), rules };
}

// Node is left out: its members are every refetchable object, each read on its own by node(id:) (a client asks for
// one type's fields there), never a stream of members read together as an event union's are.
const abstractTypes = Object.values(schema.getTypeMap())
  .filter((type) => !type.name.startsWith('__') && type.name !== 'Node')
  .filter(isAbstractType)
  .sort((a, b) => a.name.localeCompare(b.name));
const generated = abstractTypes.map(generate);

describe('unions and interfaces, every member at once', () => {
  it.each(generated.map((g) => [g.name, g] as const))("%s: every member's fields, no aliases", (_name, g) => {
    const errors = validate(schema, g.document, g.rules).map((error) => error.message);
    expect(errors, `${g.name}: validation errors of the generated document`).toEqual([]);
  });
});

describe('the generator', () => {
  it('finds the schema’s unions and interfaces', () => {
    expect(abstractTypes.length).toBeGreaterThan(0);
  });

  it.each(generated.map((g) => [g.name, g] as const))('%s: an inline fragment with every field of each possible type', (_name, g) => {
    for (const member of schema.getPossibleTypes(g.type)) expect(g.source).toContain(`... on ${member.name} {`);

    // The abstract type's own selection set: one fragment per possible type, each naming all its fields.
    const own = (parse(g.selection).definitions[0] as OperationDefinitionNode).selectionSet.selections;
    const fragments = own.filter((s): s is InlineFragmentNode => s.kind === Kind.INLINE_FRAGMENT);
    expect(fragments.map((f) => f.typeCondition!.name.value).sort()).toEqual(
      schema.getPossibleTypes(g.type).map((m) => m.name).sort(),
    );
    for (const fragment of fragments) {
      const member = schema.getType(fragment.typeCondition!.name.value) as GraphQLObjectType;
      const fields = fragment.selectionSet.selections.map((s) => (s.kind === Kind.FIELD ? s.name.value : s.kind));
      expect(fields.sort(), member.name).toEqual(Object.keys(member.getFields()).sort());
    }

    // No aliases anywhere, so same-named fields of different members must merge.
    let aliases = 0;
    visit(g.document, { Field: (node) => void (node.alias && aliases++) });
    expect(aliases).toBe(0);
  });
});
