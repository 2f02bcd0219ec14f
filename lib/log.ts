// One bunyan logger per process, writing to stderr in the chosen format (lib/log-format.ts):
// JSON lines by default, or one readable line per record (`--log-format pretty`). The spec's
// six levels map to bunyan's; `off` silences everything (startup lines included), `trace`
// behaves like `debug`. An `err` field that is an Error is written with its message, name,
// code and stack (bunyan's err serializer; without it JSON keeps only the own properties).
// At debug level lines leave in batches (lib/log-batch.ts): every logger of the process shares
// one batch, so lines keep their order, and what waits is written before the process exits.
import bunyan from 'bunyan';
import type Logger from 'bunyan';
import { stderrLines } from './log-batch.ts';
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
  // Only debug records are many ("job fired"): at info and above every record is written at
  // once as before, without the batch (no timer set and cleared per record).
  const batch = lvl < bunyan.INFO ? stderrLines() : null;
  const out = batch ?? process.stderr;
  const stream: bunyan.Stream = format === 'pretty'
    ? { type: 'raw', stream: prettyStream(out, useColour(process.stderr, process.env)) as unknown as NodeJS.WritableStream, level: lvl }
    : { stream: out as unknown as NodeJS.WritableStream, level: lvl };
  // After the record's own stream: a record at info or above goes out at once, with the debug
  // lines that waited, so what a process says at info and above is on stderr before what it
  // does next is seen (a STAT, an answer).
  const streams = batch === null
    ? [stream]
    : [stream, { type: 'raw', stream: { write: () => batch.flush() } as unknown as NodeJS.WritableStream, level: bunyan.INFO }];
  return bunyan.createLogger({
    name: 'tickd',
    role,
    level: lvl,
    serializers: { err: bunyan.stdSerializers.err },
    streams,
  });
}

/** A logger that drops everything: for library code under unit test. */
export function silentLogger(): Logger {
  return bunyan.createLogger({ name: 'tickd', streams: [], level: bunyan.FATAL + 1 });
}
