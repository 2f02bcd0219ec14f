// How log records reach standard error (tickd(8) "Logs"): `json`, bunyan's JSON lines (the
// default, for the journal and log shippers), or `pretty`, one line per record for a person at
// a terminal:
//
//   2026-11-21T10:00:00.123Z INFO  primary[4242] logfile: state loaded persistence=logfile jobs=3
//   <time, UTC>              <level> <role>[<pid>] <component>: <msg> <key=value ...>
//
// Invariants:
// - One record, one line: control characters in the message and in values are escaped, and a
//   value holding a space, a quote, `=` or a backslash is written as a JSON string.
// - The fields every record carries (name, hostname, v) are left out; an error shows its
//   message (and code), never its stack.
// - Colour (the level only) only when standard error is a terminal, NO_COLOR is unset or
//   empty (no-color.org) and TERM is not `dumb`.
// - No bunyan import: lib/cli.ts reads LOG_FORMATS without loading the logger.

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** bunyan's numeric levels, highest first, with their names and ANSI colours. */
const LEVELS: ReadonlyArray<readonly [number, string, string]> = [
  [60, 'FATAL', '31'], [50, 'ERROR', '31'], [40, 'WARN', '33'], [30, 'INFO', '32'], [20, 'DEBUG', '90'], [10, 'TRACE', '90'],
];

/** Shown in the line's head, or carried by every record and saying nothing. */
const HEAD_FIELDS: ReadonlySet<string> = new Set(['v', 'name', 'hostname', 'pid', 'time', 'level', 'msg', 'role', 'component']);

const BARE = /^[^\s"'=\\\u0000-\u001f\u007f]+$/;
const CONTROL = /[\u0000-\u001f\u007f]/g;

export interface ColourContext {
  readonly isTTY?: boolean;
}

/** Whether pretty lines on `stream` get colour. */
export function useColour(stream: ColourContext, env: Readonly<Record<string, string | undefined>>): boolean {
  return stream.isTTY === true && (env['NO_COLOR'] ?? '') === '' && env['TERM'] !== 'dumb';
}

function quoted(text: string): string {
  return BARE.test(text) ? text : JSON.stringify(text);
}

function errorText(err: Record<string, unknown>): string {
  const name = typeof err['name'] === 'string' && err['name'] !== 'Error' ? `${err['name']}: ` : '';
  const code = typeof err['code'] === 'string' || typeof err['code'] === 'number' ? ` (${err['code']})` : '';
  return `${name}${String(err['message'])}${code}`;
}

function valueText(value: unknown): string {
  switch (typeof value) {
    case 'string': return quoted(value);
    case 'number':
    case 'boolean':
    case 'bigint': return String(value);
    case 'object': break;
    default: return quoted(String(value));
  }
  if (value === null) return 'null';
  if (value instanceof Date) return value.toISOString();
  const obj = value as Record<string, unknown>;
  // An Error, or one through bunyan's err serializer: its message, not its stack.
  if (value instanceof Error || (typeof obj['message'] === 'string' && typeof obj['stack'] === 'string')) return quoted(errorText(obj));
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'undefined';
  } catch {
    return quoted(String(value));
  }
}

/** One record as one line, newline included. */
export function formatPretty(rec: Readonly<Record<string, unknown>>, colour: boolean): string {
  const level = typeof rec['level'] === 'number' ? rec['level'] : 0;
  const [, name, code] = LEVELS.find(([n]) => level >= n) ?? LEVELS[LEVELS.length - 1]!;
  const levelText = colour ? `\u001b[${code}m${name.padEnd(5)}\u001b[0m` : name.padEnd(5);
  const time = rec['time'] instanceof Date ? rec['time'].toISOString() : String(rec['time'] ?? '');
  const component = typeof rec['component'] === 'string' ? ` ${rec['component']}` : '';
  const who = `${String(rec['role'] ?? rec['name'] ?? 'tickd')}[${String(rec['pid'] ?? '?')}]${component}`;
  const msg = String(rec['msg'] ?? '').replace(CONTROL, (c) => JSON.stringify(c).slice(1, -1));
  let line = `${time} ${levelText} ${who}: ${msg}`;
  for (const [key, value] of Object.entries(rec)) {
    if (!HEAD_FIELDS.has(key) && value !== undefined) line += ` ${key}=${valueText(value)}`;
  }
  return `${line}\n`;
}

export interface Writable {
  write(text: string): unknown;
}

/** A bunyan raw stream writing each record as a pretty line; it never throws into a log call. */
export function prettyStream(out: Writable, colour: boolean): { write(rec: object): void } {
  return {
    write(rec: object): void {
      try {
        out.write(formatPretty(rec as Record<string, unknown>, colour));
      } catch {
        // A log statement must not fail because its line could not be written.
      }
    },
  };
}
