import type { Context } from '../context.js';
import type { Session } from '../../auth/tokens.js';
import { unauthenticated } from '../../errors.js';

/**
 * The authenticated session; every use case that needs a user starts here.
 * A schema field outside Query and Mutation whose resolver reaches this (or
 * ctx.viewer) is marked readsViewer: see src/schema/shared/viewer-dependent.ts.
 */
export function requireViewer(ctx: Context): Session {
  if (!ctx.viewer) throw unauthenticated();
  return ctx.viewer;
}
