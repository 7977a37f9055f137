/**
 * How each contender of the request benchmarks starts and what request runs
 * a scenario on it: one table for the requests bench, its miss profiles and
 * `npm run bench:profile`.
 */
import { startServerProcess } from '../servers/server-process.js';
import { startFloorProcess } from '../servers/floor-server.js';
import { startPeerProcess } from '../servers/peer-servers.js';
import { floorRequest, graphqlRequest, type HttpRequest } from './load.js';
import type { RequestScenario } from './scenarios.js';
import type { StartServer } from '../profiles/cpu-profile.js';
import type { ContenderName } from './rows.js';

/** How each contender's process starts, with node arguments (a profiler's). */
export const STARTERS: Record<ContenderName, StartServer> = {
  parley: startServerProcess,
  floor: startFloorProcess,
  apollo: (env, nodeArgs) => startPeerProcess('apollo', env, nodeArgs),
  mercurius: (env, nodeArgs) => startPeerProcess('mercurius', env, nodeArgs),
};

/** The HTTP request that runs `s` on contender `name` at `url`: the floor takes the variables at a path of their own. */
export function requestFor(name: ContenderName, url: string, s: RequestScenario): HttpRequest {
  return name === 'floor' ? floorRequest(url, s) : graphqlRequest(url, s);
}
