// One bunyan logger per process, writing JSON lines to stderr. The spec's six levels map to
// bunyan's; `off` silences everything (startup lines included), `trace` behaves like `debug`.
import bunyan from 'bunyan';
import type Logger from 'bunyan';

export const LOG_LEVELS = ['off', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type { Logger };

function bunyanLevel(level: LogLevel): number {
  switch (level) {
    case 'off': return bunyan.FATAL + 1;
    case 'error': return bunyan.ERROR;
    case 'warn': return bunyan.WARN;
    case 'info': return bunyan.INFO;
    case 'debug':
    case 'trace': return bunyan.DEBUG;
  }
}

export function createLogger(level: LogLevel, role: string): Logger {
  return bunyan.createLogger({
    name: 'tickd',
    role,
    level: bunyanLevel(level),
    streams: [{ stream: process.stderr, level: bunyanLevel(level) }],
  });
}

/** A logger that drops everything: for library code under unit test. */
export function silentLogger(): Logger {
  return bunyan.createLogger({ name: 'tickd', streams: [], level: bunyan.FATAL + 1 });
}
