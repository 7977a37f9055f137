/**
 * The instance's logger, and the adapter Yoga logs through.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { YogaLogger } from 'graphql-yoga';
import type { Config } from '../config.js';
import { requestLogFields } from '../server/http/request-scope.js';
import { traceLogFields } from './tracing.js';

/** `destination` defaults to stdout; tests pass one that collects lines. */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    redact: ['password', '*.password', 'token', '*.token'],
    mixin: () => ({ ...requestLogFields(), ...traceLogFields() }),
  };
  return destination ? pino(options, destination) : pino(options);
}

export function yogaLogger(logger: Logger): YogaLogger {
  // Yoga logs a debug line or two per request: the line is made only when it would be written.
  const at = (level: 'debug' | 'info' | 'warn') => (...args: unknown[]) => {
    if (logger.isLevelEnabled(level)) logger[level](logLine(args));
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    // Yoga logs every error it masks at error level, and some twice; src/server/error-masking.ts logs
    // each once at the level it deserves, so Yoga's lines are only for debugging.
    error: at('debug'),
  };
}

/**
 * Yoga's log lines, with nothing a client sent in them: a GraphQL error's message
 * or printed form can quote the query or the variables (a password, say), and
 * other arguments can be request parameters. Only plain strings, error names
 * and codes, and the messages of non-GraphQL errors (ours or the driver's) pass.
 */
function logLine(args: unknown[]): string {
  return args
    .map((a) => {
      if (typeof a === 'string') return a;
      if (a instanceof Error || (a as { name?: unknown })?.name === 'GraphQLError') {
        const e = a as Error & { extensions?: { code?: unknown } };
        return e.name === 'GraphQLError' ? `GraphQLError[${String(e.extensions?.code ?? 'no code')}]` : `${e.name}: ${e.message}`;
      }
      return `[${typeof a}]`;
    })
    .join(' ');
}
