/**
 * What an operator reads when a start fails: one line that says what to fix
 * (a setting, credentials, an edited migration, a port in use) or what the
 * start waited for in vain, never a stack trace. src/main.ts prints it and
 * exits; an error nobody foresaw still gets one line, its stack going to the log.
 */
import { SettingError } from '../config.js';
import { LocalNodeError } from '../local-node/launcher.js';
import { MigrationError } from '../db/cassandra/migrate.js';
import { describeStorageError, describeStorageMistake, StorageNotReadyError } from '../db/cassandra/startup-wait.js';

export interface StartupFailure {
  /** One line, without a newline: what went wrong and what to do. */
  line: string;
  /** Whether the cause is one the start knows (else the full error belongs in the log). */
  foreseen: boolean;
}

/** The listen() failures of the HTTP server, by their system error code. */
function listenFailure(err: NodeJS.ErrnoException & { port?: number; address?: string }): string | undefined {
  if (err.syscall !== 'listen') return undefined;
  const where = `${err.address ?? 'the host'}:${err.port ?? '?'}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return `port ${err.port} is in use (${where}): stop what listens there, or set PORT to a free port`;
    case 'EACCES':
      return `not allowed to listen on ${where}: set PORT above 1023, or allow this process to bind it`;
    case 'EADDRNOTAVAIL':
      return `${err.address} is not an address of this machine: fix HOST`;
    default:
      return `cannot listen on ${where} (${err.code}): check HOST and PORT`;
  }
}

/** Lines past the first (a node's log tail, say) go to the log; the line says so. */
function firstLineOf(message: string): string {
  const lines = message.split('\n');
  const first = lines[0]!.trim();
  return lines.length === 1 ? first : `${first.replace(/[\s:.]*$/, '')} (more in the log)`;
}

export function describeStartupFailure(err: unknown): StartupFailure {
  const said = err instanceof SettingError || err instanceof LocalNodeError || err instanceof StorageNotReadyError || err instanceof MigrationError;
  if (said) return { line: firstLineOf(err.message), foreseen: true };
  const listening = listenFailure(err as NodeJS.ErrnoException);
  if (listening) return { line: listening, foreseen: true };
  const mistake = describeStorageMistake(err);
  if (mistake) return { line: mistake, foreseen: true };
  return { line: `${describeStorageError(err)} (unforeseen: its stack is in the log)`, foreseen: false };
}
