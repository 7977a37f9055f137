/**
 * Which fields answer differently depending on who asks.
 *
 * A subscription event is executed once per instance for all the subscribers
 * that send the same document, operation name and variables, and each of
 * them gets that one result (src/server/live/shared-execution.ts). That is sound
 * only while nothing the document selects depends on the viewer. So a field
 * whose value, or whose error, depends on the viewer (it reads ctx.viewer,
 * calls requireViewer, or calls a use case that does: "visible to its owner
 * only", "participants only", "the seller only") carries
 * `extensions: readsViewer`, and an event for a document that selects such a
 * field anywhere (through fragments, and on every type of a union or
 * interface) is executed once per viewer login instead.
 *
 * The rule, checked by test/server/viewer-dependent.test.ts: every field outside
 * Query and Mutation whose resolver, as written in src/schema/, takes the
 * context says which it is, `readsViewer` or `sameForEveryViewer`. Query and
 * Mutation fields are never part of an event. A resolver that does not take
 * the context cannot read the viewer, as long as no parent object carries the
 * context and answers per viewer (PersonAsUser carries it to load rows, never
 * to read the viewer: keep it so). A viewer is told apart by its login: a
 * field must not answer differently for two sessions of one login.
 */
export const readsViewer = { viewerDependent: true } as const;

/** Takes the context (a loader, the clock, storage) but answers every viewer alike. */
export const sameForEveryViewer = { viewerDependent: false } as const;

/** Whether a field of the built schema is marked readsViewer. */
export function isViewerDependent(field: { extensions?: Readonly<Record<string, unknown>> | null }): boolean {
  return field.extensions?.viewerDependent === true;
}

/** Whether a field says either way (the rule above). */
export function declaresViewerDependence(field: { extensions?: Readonly<Record<string, unknown>> | null }): boolean {
  return typeof field.extensions?.viewerDependent === 'boolean';
}
