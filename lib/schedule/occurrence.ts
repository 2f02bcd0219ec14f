// An occurrence of a schedule is an ordinary job (lib/schedule/README.md; issue 37). Its identity is
// (schedule, nominal time), as Temporal, Kubernetes and BullMQ name theirs, so the same
// occurrence can never exist twice: its job identifier is derived from both,
//
//   <schedule id>:<nominal time, UTC, basic ISO 8601>      nightly.backup:20261127T023000Z
//
// with a fraction of a second only when the nominal time has one (`every 1500ms`). It begins
// with the schedule's identifier, so a rule whose pattern is that identifier, or a prefix of
// it, runs it, and a token whose namespace holds the schedule holds its occurrences. The
// schedule identifier is at most MAX_SCHEDULE_ID_BYTES (spec.ts), so the whole stays within
// an identifier's 1024 bytes.
//
// Jitter is derived from the schedule and the nominal time (a hash, never a random draw), so a
// restart, a replay or another node computes the same firing time.
import { hash } from 'node:crypto';
import { formatIso } from '../domain/time.ts';

/** Between the schedule's identifier and the nominal time: `:`, an identifier character. */
export const OCCURRENCE_SEPARATOR = ':';

/** The job identifier of the occurrence of schedule `id` at `nominalNs`. */
export function occurrenceId(id: string, nominalNs: bigint): string {
  return `${id}${OCCURRENCE_SEPARATOR}${basicIso(nominalNs)}`;
}

// Deciding one occurrence asks for the identifiers of the schedule's recent ones (a new job,
// what still runs, what retention removes), and schedules of one expression share their
// nominal times: formatting each anew was 1.2 KB of garbage a decision (bench row
// schedules-spread, an allocation profile). A small memo, emptied when full, serves them.
const SUFFIXES_KEPT = 256;
const suffixes = new Map<bigint, string>();

/** 2026-11-27T02:30:00Z -> 20261127T023000Z: no `-` or `:` inside, so the parts read apart. */
function basicIso(ns: bigint): string {
  let s = suffixes.get(ns);
  if (s === undefined) {
    s = basic(ns);
    if (suffixes.size >= SUFFIXES_KEPT) suffixes.clear();
    suffixes.set(ns, s);
  }
  return s;
}

function basic(ns: bigint): string {
  return formatIso(ns).replace(/[-:]/g, '');
}

/** How long after `nominalNs` the occurrence fires: from 0 to `jitterNs` inclusive, the same every time it is asked. */
export function jitterOf(id: string, nominalNs: bigint, jitterNs: bigint): bigint {
  if (jitterNs <= 0n) return 0n;
  // The one-shot hash: the same digest as createHash's, 1.8 us against 2.9 (one an occurrence);
  // its first 8 bytes read from hex, not from a Buffer: 0.9 us against 1.7-2.2, and no
  // ArrayBuffer a decision for the collector to track.
  const hex = hash('sha256', `${id}\0${nominalNs}`, 'hex');
  return BigInt(`0x${hex.slice(0, 16)}`) % (jitterNs + 1n);
}

/** What a manual run's job identifier has between the separator and the instant it was asked for. */
export const MANUAL_MARK = 'manual-';

/** The job identifier of a manual run (run now) of schedule `id` asked for at `atNs`. */
export function manualId(id: string, atNs: bigint): string {
  return `${id}${OCCURRENCE_SEPARATOR}${MANUAL_MARK}${basic(atNs)}`; // an instant of its own: not memoized
}

const SUFFIX = /^(manual-)?(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\.\d{1,9})?Z$/;

/**
 * The schedule and nominal time a job identifier of either form above names, or null when it
 * has neither form. Any job so named reads as an occurrence (tickd-protocol(7) SCHEDULES): its
 * runner is told the schedule and the time.
 */
export function parseOccurrenceId(jobId: string): { readonly schedule: string; readonly nominal: bigint; readonly manual: boolean } | null {
  const sep = jobId.lastIndexOf(OCCURRENCE_SEPARATOR);
  if (sep <= 0) return null;
  const m = SUFFIX.exec(jobId.slice(sep + 1));
  if (m === null) return null;
  const ms = Date.UTC(Number(m[2]), Number(m[3]) - 1, Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7]));
  if (Number.isNaN(ms)) return null;
  const fraction = m[8] === undefined ? 0n : BigInt(m[8].slice(1).padEnd(9, '0'));
  return { schedule: jobId.slice(0, sep), nominal: BigInt(ms) * 1_000_000n + fraction, manual: m[1] !== undefined };
}
