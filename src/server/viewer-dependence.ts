/**
 * Whether an operation selects a field marked readsViewer
 * (src/schema/shared/viewer-dependent.ts): its events then cannot be executed
 * once for every subscriber, only once per viewer.
 */
import {
  getNamedType,
  getOperationAST,
  isAbstractType,
  isCompositeType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { isViewerDependent } from '../schema/shared/viewer-dependent.js';

/**
 * The answer for each operation of a document, worked out once: a document
 * lives in Yoga's parse cache and is shared by every subscription that sends
 * its text (and is validated against the one schema).
 */
export class ViewerDependence {
  private readonly byDocument = new WeakMap<DocumentNode, Map<string, boolean>>();

  of(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): boolean {
    let byOperation = this.byDocument.get(document);
    if (!byOperation) this.byDocument.set(document, (byOperation = new Map()));
    const key = operationName ?? '';
    let answer = byOperation.get(key);
    if (answer === undefined) byOperation.set(key, (answer = selectsViewerDependentField(schema, document, operationName)));
    return answer;
  }
}

/**
 * Walks the operation's selections through its fragments, over-approximating
 * where it cannot tell: @skip and @include are ignored (the field may run), a
 * field selected on an interface counts as the same field of every type that
 * implements it, and anything it cannot resolve counts as dependent.
 */
export function selectsViewerDependentField(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): boolean {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return true;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  // A fragment's fields are those of its type condition wherever it is spread: one walk each is enough.
  const walked = new Set<string>();

  const walk = (selectionSet: SelectionSetNode, type: GraphQLCompositeType): boolean => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        // __typename, and introspection (root fields only), answer every viewer alike.
        if (selection.name.value.startsWith('__')) continue;
        const fields = fieldsRunFor(schema, type, selection.name.value);
        if (fields.length === 0) return true;
        for (const field of fields) {
          if (isViewerDependent(field)) return true;
          const next = getNamedType(field.type);
          if (selection.selectionSet && (!isCompositeType(next) || walk(selection.selectionSet, next))) return true;
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        if (!isCompositeType(on) || walk(selection.selectionSet, on)) return true;
      } else {
        const name = selection.name.value;
        if (walked.has(name)) continue;
        walked.add(name);
        const fragment = fragments.get(name);
        const on = fragment && schema.getType(fragment.typeCondition.name.value);
        if (!fragment || !isCompositeType(on) || walk(fragment.selectionSet, on)) return true;
      }
    }
    return false;
  };
  return walk(operation.selectionSet, root);
}

/** The fields a selection of `name` on `type` may run: on an abstract type, that field of each possible type too. */
function fieldsRunFor(schema: GraphQLSchema, type: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown>[] {
  const types = isAbstractType(type) ? [type, ...schema.getPossibleTypes(type)] : [type];
  const fields: GraphQLField<unknown, unknown>[] = [];
  for (const t of types) {
    const field = 'getFields' in t ? t.getFields()[name] : undefined;
    if (field) fields.push(field);
  }
  return fields;
}
