// How `tickd dump` shows one record (decisions §2). Two forms:
//
// text: lines that read like protocol commands, arguments quoted as in decisions §6 (an
// argument that is empty or holds a space, `"` or `\` is written in double quotes with `\"`
// and `\\`; one that starts with `#` is quoted too). Control characters, which no protocol
// line can carry, are shown inside quotes as \n \r \t or \xHH (display only).
//   SET <id> <execution_ns> # <status> <ISO-8601 UTC time>
//   RULE SET <id> <pattern> <kind> <runner args as in LISTRULES>
//   REMOVE <id>
//   REMOVERULE <id>
// A job's status is a trailing comment: `#` and the two words after it are always the last
// three tokens of a SET line, so `awk '{print $(NF-1)}'` gives the status.
//
// json: one object per line; `execution` is an exact integer, never rounded.
//   {"type":"job","id":...,"execution":1775822400123456789,"status":"planned"}
//   {"type":"rule","id":...,"pattern":...,"runner":{"type":"shell","command":...}}
//   {"type":"job.removed","id":...}   {"type":"rule.removed","id":...}
// Runners use the HTTP object form of decisions §8 for every kind.
import type { RunnerSpec } from '../domain/runner-spec.ts';
import type { LogRecord } from './record.ts';

export type DumpFormat = 'text' | 'json';

export function formatRecord(rec: LogRecord, format: DumpFormat): string {
  return format === 'json' ? formatJson(rec) : formatText(rec);
}

export function formatText(rec: LogRecord): string {
  switch (rec.t) {
    case 'job':
      return `SET ${quoteArg(rec.job.id)} ${rec.job.execution} # ${rec.job.status} ${isoFromNs(rec.job.execution)}`;
    case 'rule':
      return ['RULE', 'SET', rec.rule.id, rec.rule.pattern, ...runnerTokens(rec.rule.runner)].map((t, i) => (i < 2 ? t : quoteArg(t))).join(' ');
    case 'job.removed':
      return `REMOVE ${quoteArg(rec.id)}`;
    case 'rule.removed':
      return `REMOVERULE ${quoteArg(rec.id)}`;
  }
}

export function formatJson(rec: LogRecord): string {
  const s = JSON.stringify;
  switch (rec.t) {
    case 'job':
      return `{"type":"job","id":${s(rec.job.id)},"execution":${rec.job.execution},"status":${s(rec.job.status)}}`;
    case 'rule':
      return `{"type":"rule","id":${s(rec.rule.id)},"pattern":${s(rec.rule.pattern)},"runner":${s(rec.rule.runner)}}`;
    case 'job.removed':
      return `{"type":"job.removed","id":${s(rec.id)}}`;
    case 'rule.removed':
      return `{"type":"rule.removed","id":${s(rec.id)}}`;
  }
}

/** The runner part of a RULE SET line: the kind, then its arguments as LISTRULES shows them. */
export function runnerTokens(r: RunnerSpec): string[] {
  switch (r.type) {
    case 'shell': return ['shell', r.command];
    case 'direct': return ['direct', r.executable, ...r.args];
    case 'http': return ['http', r.method, r.url];
    case 'awf': return ['awf', r.workflow, ...r.inputs.flatMap((input) => ['--input', input])];
    case 'amqp': return ['amqp', r.dsn, r.exchange, r.routing_key];
    case 'redis': return ['redis', r.url, r.command, r.key];
  }
}

const NEEDS_QUOTES = /[\s"\\\x00-\x1f\x7f]|^#|^$/;
const ESCAPED = /["\\\x00-\x1f\x7f]/g;
const CONTROL_NAMES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function quoteArg(arg: string): string {
  if (!NEEDS_QUOTES.test(arg)) return arg;
  const body = arg.replace(ESCAPED, (c) => {
    if (c === '"' || c === '\\') return `\\${c}`;
    return CONTROL_NAMES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
  return `"${body}"`;
}

const NS_PER_MS = 1_000_000n;

/** `2026-04-10T12:00:00.123456789Z` (floor toward -infinity). i64 ns spans 1677..2262: a Date shows all of it. */
export function isoFromNs(ns: bigint): string {
  let ms = ns / NS_PER_MS;
  if (ns % NS_PER_MS !== 0n && ns < 0n) ms -= 1n;
  const subMs = ns - ms * NS_PER_MS; // 0 .. 999999
  const iso = new Date(Number(ms)).toISOString(); // ...T12:00:00.123Z
  return `${iso.slice(0, -1)}${subMs.toString().padStart(6, '0')}Z`;
}
