/**
 * The project's root directory (the one holding package.json), found by
 * walking up from this file: the same answer whether the code runs from
 * src/ through tsx or compiled into dist/src/.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PROJECT_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the project, such as projectPath('cql'). */
export const projectPath = (...parts: string[]) => join(PROJECT_ROOT, ...parts);
