// How ctl prints data (tickd-ctl(1) OUTPUT). Pure: strings in, strings out.
//
// - table (the default): aligned columns under a header; times as RFC 3339 in UTC with all
//   nine fraction digits, so the nanoseconds stay visible and columns line up; a status is
//   coloured only when the caller says so (a terminal, NO_COLOR unset). Nothing at all is
//   printed for an empty list. Column widths come from the first TABLE_SAMPLE rows, so a
//   listing of millions streams instead of being held; a longer value later only shifts its row.
// - json: one document; execution (and every integer STAT value) an exact integer literal.
//   Jobs are {"id","status","execution"} and rules {"id","pattern","runner":{...}} with the
//   options a rule has ("retry", "concurrency", "rate"), the shapes of the HTTP interface
//   (tickd-protocol(7) HTTP INTERFACE). `job get` adds "attempts", each with the members of
//   HTTP's attempt that ATTEMPTS tells (not its rule, runner or outcome object).
// - raw: the protocol lines as the daemon sent them, request id removed.
import { formatIso } from '../domain/time.ts';
import type { Job, JobStatus } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import { quoteArg, runnerTokens } from '../domain/arguments.ts';
import { runnerToJson } from '../domain/runner-spec.ts';
import { optionsToJson } from '../domain/rule-options.ts';
import { toJson, type JsonValue } from '../http/json.ts';
import type { Attempt as AttemptLine } from '../client/replies.ts';

export const TABLE_SAMPLE = 1000;

const COLORS: Readonly<Record<JobStatus, string>> = { planned: '36', triggered: '33', executed: '32', failed: '31' };

/** `2026-04-10T12:00:00.123456789Z`: UTC, nine fraction digits, exact for all of i64. */
export function formatTime(ns: bigint): string {
  const iso = formatIso(ns);
  const dot = iso.indexOf('.');
  if (dot === -1) return `${iso.slice(0, -1)}.000000000Z`;
  return `${iso.slice(0, dot + 1)}${iso.slice(dot + 1, -1).padEnd(9, '0')}Z`;
}

export function colorStatus(status: string, color: boolean): string {
  const code = COLORS[status as JobStatus];
  return color && code !== undefined ? `\x1b[${code}m${status}\x1b[0m` : status;
}

/** A table printed as rows arrive: the first TABLE_SAMPLE rows fix the column widths. */
export class TableWriter {
  private readonly header: readonly string[];
  /** Index of the column holding a job status (coloured), or -1. */
  private readonly statusColumn: number;
  private readonly color: boolean;
  private sample: string[][] | null = [];
  private widths: number[] = [];

  constructor(header: readonly string[], opts: { statusColumn?: number; color?: boolean } = {}) {
    this.header = header;
    this.statusColumn = opts.statusColumn ?? -1;
    this.color = opts.color === true;
  }

  /** Text to print now (empty while the widths are being sampled). */
  add(cells: readonly string[]): string {
    if (this.sample !== null) {
      this.sample.push([...cells]);
      return this.sample.length >= TABLE_SAMPLE ? this.release() : '';
    }
    return this.row(cells);
  }

  /** What is left to print; nothing for a table without rows. */
  end(): string {
    return this.sample === null ? '' : this.release();
  }

  private release(): string {
    const rows = this.sample ?? [];
    this.sample = null;
    if (rows.length === 0) return '';
    this.widths = this.header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    return this.row(this.header, true) + rows.map((r) => this.row(r)).join('');
  }

  private row(cells: readonly string[], isHeader = false): string {
    const last = cells.length - 1;
    let line = '';
    for (let i = 0; i <= last; i++) {
      const cell = cells[i] ?? '';
      const pad = i === last ? '' : ' '.repeat(Math.max(0, (this.widths[i] ?? 0) - cell.length) + 2);
      line += (i === this.statusColumn && !isHeader ? colorStatus(cell, this.color) : cell) + pad;
    }
    return `${line}\n`;
  }
}

export const JOB_HEADER = ['ID', 'STATUS', 'EXECUTION'] as const;
/** `job get`: one job, with how many attempts the daemon recorded and how the last ended. */
export const JOB_DETAIL_HEADER = [...JOB_HEADER, 'ATTEMPTS', 'LAST OUTCOME'] as const;
export const RULE_HEADER = ['ID', 'PATTERN', 'RUNNER'] as const;
export const STAT_HEADER = ['KEY', 'VALUE'] as const;

export function jobCells(job: Job): string[] {
  return [job.id, job.status, formatTime(job.execution)];
}

export function jobDetailCells(job: Job, attempts: readonly AttemptLine[]): string[] {
  const last = attempts.at(-1);
  return [...jobCells(job), String(attempts.length), last === undefined ? '-' : `${last.success ? 'success' : 'failure'}: ${last.summary}`];
}

/** The runner as its RULE SET words, quoted as the protocol writes them. */
export function runnerText(rule: Rule): string {
  return runnerTokens(rule.runner).map(quoteArg).join(' ');
}

export function ruleCells(rule: Rule): string[] {
  return [rule.id, quoteArg(rule.pattern), runnerText(rule)];
}

export function jobJson(job: Job): string {
  return toJson({ id: job.id, status: job.status, execution: job.execution });
}

export function jobDetailJson(job: Job, attempts: readonly AttemptLine[]): string {
  return toJson({
    id: job.id, status: job.status, execution: job.execution,
    attempts: attempts.map((a) => ({
      attempt: a.attempt, started_ns: a.startedNs, lateness_ns: a.latenessNs, held_ns: a.heldNs, duration_ns: a.durationNs, success: a.success, summary: a.summary,
    })),
  });
}

export function ruleJson(rule: Rule): string {
  return toJson({ id: rule.id, pattern: rule.pattern, runner: runnerToJson(rule.runner) as unknown as JsonValue, ...(optionsToJson(rule.options) as Record<string, JsonValue>) });
}

/** STAT as one object: integer values as exact integer literals, the others as strings. */
export function statJson(pairs: ReadonlyArray<readonly [string, string]>): string {
  const obj: Record<string, JsonValue> = {};
  for (const [k, v] of pairs) obj[k] = /^-?\d+$/.test(v) ? BigInt(v) : v;
  return toJson(obj);
}

/** Streams a JSON array: `[`, items separated by commas, one per line, then `]`. */
export class JsonArrayWriter {
  private count = 0;

  add(item: string): string {
    return `${this.count++ === 0 ? '[\n' : ',\n'}${item}`;
  }

  end(): string {
    return this.count === 0 ? '[]\n' : '\n]\n';
  }
}
