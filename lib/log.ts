// One bunyan logger per process, writing to stderr in the chosen format (lib/log-format.ts):
// JSON lines by default, or one readable line per record (`--log-format pretty`). The spec's
// six levels map to bunyan's; `off` silences everything (startup lines included), `trace`
// behaves like `debug`. An `err` field that is an Error is written with its message, name,
// code and stack (bunyan's err serializer; without it JSON keeps only the own properties).
import bunyan from 'bunyan';
import type Logger from 'bunyan';
import { prettyStream, useColour, type LogFormat } from './log-format.ts';

export const LOG_LEVELS = ['off', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type { Logger };
export type { LogFormat };

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

export function createLogger(level: LogLevel, role: string, format: LogFormat = 'json'): Logger {
  const lvl = bunyanLevel(level);
  const stream: bunyan.Stream = format === 'pretty'
    ? { type: 'raw', stream: prettyStream(process.stderr, useColour(process.stderr, process.env)) as unknown as NodeJS.WritableStream, level: lvl }
    : { stream: process.stderr, level: lvl };
  return bunyan.createLogger({
    name: 'tickd',
    role,
    level: lvl,
    serializers: { err: bunyan.stdSerializers.err },
    streams: [stream],
  });
}

/** A logger that drops everything: for library code under unit test. */
export function silentLogger(): Logger {
  return bunyan.createLogger({ name: 'tickd', streams: [], level: bunyan.FATAL + 1 });
}
