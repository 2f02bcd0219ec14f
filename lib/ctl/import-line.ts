// One line of `job import` input (tickd-ctl(1) "IMPORT AND EXPORT"). Pure.
//
//   ID WHEN                       words separated by spaces or tabs; WHEN as for job set
//   {"id":"ID","execution":N}     a JSON object; execution an integer (read exactly, never
//                                 through a float) or a WHEN string; other fields are ignored
//   blank, or starting with #     skipped
import { validateIdentifier } from '../domain/identifier.ts';
import { parseWhen } from './when.ts';

export type ImportLine =
  | { readonly kind: 'skip' }
  /** ns: the execution as the decimal integer to send (exact). */
  | { readonly kind: 'job'; readonly id: string; readonly ns: string }
  | { readonly kind: 'error'; readonly message: string };

const SKIP: ImportLine = { kind: 'skip' };
const WORDS = /[ \t]+/;
/** Nanoseconds that fit i64 whatever the digits: sent as written, no BigInt round trip. */
const SHORT_INTEGER = /^-?(?:\d{1,18}|[1-8]\d{18})$/;

type Reviver = (key: string, value: unknown, context?: { source?: string }) => unknown;
const parseJson = JSON.parse as (text: string, reviver: Reviver) => unknown;

/** Integers keep every digit: the reviver sees the number's source text (Node 21+). */
function exactReviver(key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && context?.source !== undefined && /^-?\d+$/.test(context.source)) return BigInt(context.source);
  return value;
}

function job(id: unknown, when: readonly string[] | bigint, nowNs: bigint): ImportLine {
  if (typeof id !== 'string') return { kind: 'error', message: 'missing "id" (a string)' };
  const bad = validateIdentifier('job', id);
  if (bad !== null) return { kind: 'error', message: bad };
  if (typeof when === 'bigint') return { kind: 'job', id, ns: when.toString() };
  if (when.length === 1 && SHORT_INTEGER.test(when[0]!)) return { kind: 'job', id, ns: when[0]! };
  const r = parseWhen(when, nowNs);
  return 'error' in r ? { kind: 'error', message: r.error } : { kind: 'job', id, ns: r.ns.toString() };
}

function jsonLine(text: string, nowNs: bigint): ImportLine {
  let value: unknown;
  try {
    value = parseJson(text, exactReviver);
  } catch (err) {
    return { kind: 'error', message: `not valid JSON: ${(err as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'error', message: 'a JSON line must be an object' };
  const o = value as Record<string, unknown>;
  const exec = o['execution'];
  if (typeof exec === 'bigint') {
    const r = parseWhen([exec.toString()], nowNs); // the i64 range check
    return 'error' in r ? { kind: 'error', message: r.error } : job(o['id'], r.ns, nowNs);
  }
  if (typeof exec === 'string') return job(o['id'], [exec], nowNs);
  return { kind: 'error', message: '"execution" must be integer nanoseconds or a WHEN string' };
}

export function parseImportLine(line: string, nowNs: bigint): ImportLine {
  // The common line, `ID NANOSECONDS` with one space, without trim, split or regex splitting.
  const sp = line.indexOf(' ');
  if (sp > 0 && line.indexOf(' ', sp + 1) === -1 && line.indexOf('\t') === -1 && line.charCodeAt(0) !== 0x7b && line.charCodeAt(0) !== 0x23) {
    return job(line.slice(0, sp), [line.slice(sp + 1)], nowNs);
  }
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return SKIP;
  if (text.startsWith('{')) return jsonLine(text, nowNs);
  const words = text.split(WORDS);
  if (words.length < 2) return { kind: 'error', message: 'expected ID WHEN' };
  return job(words[0], words.slice(1), nowNs);
}
