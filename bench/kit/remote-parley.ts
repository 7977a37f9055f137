/** A Parley contender in a process of its own, for the scenarios and the profiler: the settings it runs with, and how the testkit's clients reach it. */
import type { App } from '../../src/app.js';

/** How a Parley contender runs unless a scenario measures a setting: as in production, compiled, metrics off. */
export const PRODUCTION_ENV = { NODE_ENV: 'production', METRICS: 'off' };

/** A server in another process, as the testkit's clients (which need only its address) take it. */
export const remoteApp = (url: string) => ({ url }) as App;
