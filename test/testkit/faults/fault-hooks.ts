/**
 * Fault hooks (AppOptions.hooks, read by the marketplace at chosen steps) as
 * tests install them: a hook runs once and removes itself, and whatever
 * happens in the test, it is gone after it, so a test that fails before the
 * hooked step cannot leak its hook into the next one.
 */
import { afterEach } from 'vitest';
import type { MarketplaceHooks } from '../../../src/resolvers/marketplace/runtime.js';

const installed: Array<() => void> = [];
afterEach(() => {
  for (const remove of installed.splice(0)) remove();
});

type Hook<K extends keyof MarketplaceHooks> = NonNullable<MarketplaceHooks[K]>;

/** Runs `fn` the first time the hook fires, then removes it. */
export function onceHook<K extends keyof MarketplaceHooks>(hooks: MarketplaceHooks, name: K, fn: Hook<K>): void {
  const once = ((...args: Parameters<Hook<K>>) => {
    remove();
    return (fn as (...a: Parameters<Hook<K>>) => unknown)(...args);
  }) as Hook<K>;
  const remove = () => {
    if (hooks[name] === once) hooks[name] = undefined;
  };
  hooks[name] = once;
  installed.push(remove);
}

/** Runs `fn` every time the hook fires until `remove()` or the end of the test. */
export function hookUntilRemoved<K extends keyof MarketplaceHooks>(hooks: MarketplaceHooks, name: K, fn: Hook<K>): () => void {
  hooks[name] = fn;
  const remove = () => {
    if (hooks[name] === fn) hooks[name] = undefined;
  };
  installed.push(remove);
  return remove;
}
