// `sched set`, `sched get`, `sched ls`, `sched rm`, `sched next`, `sched pause`, `sched resume`,
// `sched run`, `sched history` (tickd-ctl(1) COMMANDS, SCHEDULES): the protocol's SCHEDULE
// SET, GET, LIST, REMOVE, NEXT, PAUSE, RESUME, RUN and HISTORY.
//
// `sched set` takes the fields as KEY=VALUE words, the keys of SCHEDULE SET (the HTTP field
// names). It checks them as the daemon does (lib/schedule/spec.ts readSchedule), so a bad field
// is a usage error naming it before anything is sent, then sends each as one protocol token,
// quoted as a whole when it needs it (`"cron=0 30 2 * * *"`). `start` and `end` also take the
// relative forms of WHEN (`start=+1h`), sent as nanoseconds like every time ctl sends.
import { quoteArg } from '../domain/arguments.ts';
import { validateIdentifier } from '../domain/identifier.ts';
import { MAX_LINE_BYTES } from '../protocol/framer.ts';
import { FIELDS, MAX_SCHEDULE_ID_BYTES, readSchedule } from '../schedule/spec.ts';
import { toJson } from '../http/json.ts';
import { quoteWord } from './args.ts';
import { expectOk, type Ctx, type Prepare } from './context.ts';
import { ConnectionError, UsageError } from './errors.ts';
import { checkPrefix } from './job-commands.ts';
import { JsonArrayWriter, TableWriter } from './output.ts';
import { addrOf, listing, single } from './requests.ts';
import {
  FIELD_HEADER, HISTORY_HEADER, NEXT_HEADER, SCHEDULE_HEADER, historyCells, historyJson, nextCells, scheduleCells, scheduleJson, scheduleRows,
} from './schedule-output.ts';
import { optionOf, parseHistoryLine, parseInstantLine, parseScheduleLine, type ScheduleLine } from '../client/schedule-lines.ts';
import { parseWhen } from './when.ts';
import type { Client } from '../client/index.ts';

/** The longest request id ctl uses on a line (`c` and a counter). */
const RID_ROOM = 12;
/** How many instants NEXT, and entries HISTORY, give at most. */
export const MAX_COUNT = 100;

export function checkScheduleId(id: string): string {
  const bad = validateIdentifier('job', id)?.replace('job identifier', 'schedule identifier')
    ?? (id.length > MAX_SCHEDULE_ID_BYTES ? `schedule identifier too long (max ${MAX_SCHEDULE_ID_BYTES} bytes)` : null);
  if (bad !== null) throw new UsageError(bad);
  return id;
}

/** N of `sched next` and `sched history`: an integer from 1 to MAX_COUNT. */
export function checkCount(text: string | undefined): number | null {
  if (text === undefined) return null;
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > MAX_COUNT) throw new UsageError(`N must be an integer from 1 to ${MAX_COUNT}, not "${quoteWord(text)}"`);
  return Number(text);
}

/**
 * The SCHEDULE SET line for `sched set ID KEY=VALUE...`, the fields checked as the daemon
 * checks them; a UsageError naming the field otherwise.
 */
export function scheduleSetLine(id: string, words: readonly string[], nowNs: bigint): string {
  checkScheduleId(id);
  const pairs: Array<[string, string]> = [];
  for (const word of words) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new UsageError(`expected KEY=VALUE, not "${quoteWord(word)}" (quote a value that has spaces: 'cron=0 30 2 * * *')`);
    const key = word.slice(0, eq);
    let value = word.slice(eq + 1);
    if (!(FIELDS as readonly string[]).includes(key)) throw new UsageError(`${quoteWord(key)}: unknown field (known: ${FIELDS.join(', ')})`);
    if (pairs.some(([k]) => k === key)) throw new UsageError(`${key}: given twice`);
    if (key === 'start' || key === 'end') {
      const when = parseWhen([value], nowNs);
      if ('error' in when) throw new UsageError(`${key}: ${when.error}`);
      value = String(when.ns);
    }
    pairs.push([key, value]);
  }
  const read = readSchedule(id, Object.fromEntries(pairs));
  if ('error' in read) throw new UsageError(read.field === 'id' ? read.error : `${read.field}: ${read.error}`);
  const line = `SCHEDULE SET ${quoteArg(id)} ${pairs.map(([k, v]) => quoteArg(`${k}=${v}`)).join(' ')}`;
  const bytes = Buffer.byteLength(line) + RID_ROOM;
  if (bytes > MAX_LINE_BYTES) throw new UsageError(`the schedule makes a protocol line of ${bytes} bytes; the daemon takes at most ${MAX_LINE_BYTES}`);
  return line;
}

function unexpected(client: Client, what: string, body: string): ConnectionError {
  return new ConnectionError(`unexpected answer to ${what} from ${addrOf(client)}: ${JSON.stringify(body.slice(0, 80))}`);
}

/** Sends a request answered `OK <schedule line>` and prints the schedule. */
async function oneSchedule(ctx: Ctx, text: string, what: string): Promise<number> {
  const client = await ctx.client();
  const body = expectOk(await single(client, text));
  const s = parseScheduleLine(body);
  if (s === null) throw unexpected(client, what, body);
  if (ctx.format === 'json') ctx.out.write(`${scheduleJson(s)}\n`);
  else if (ctx.format === 'raw') ctx.out.write(`OK ${body}\n`);
  else {
    const t = new TableWriter(FIELD_HEADER);
    ctx.out.write(scheduleRows(s).map((r) => t.add(r)).join('') + t.end());
  }
  return 0;
}

export const schedSet: Prepare = (args, input) => {
  const line = scheduleSetLine(args[0]!, args.slice(1), input.nowNs);
  return (ctx) => oneSchedule(ctx, line, 'SCHEDULE SET');
};

export const schedGet: Prepare = (args) => {
  const id = checkScheduleId(args[0]!);
  return (ctx) => oneSchedule(ctx, `SCHEDULE GET ${id}`, 'SCHEDULE GET');
};

export const schedPause: Prepare = (args) => {
  const id = checkScheduleId(args[0]!);
  return (ctx) => oneSchedule(ctx, `SCHEDULE PAUSE ${id}`, 'SCHEDULE PAUSE');
};

export const schedResume: Prepare = (args) => {
  const id = checkScheduleId(args[0]!);
  return (ctx) => oneSchedule(ctx, `SCHEDULE RESUME ${id}`, 'SCHEDULE RESUME');
};

export const schedLs: Prepare = (args) => {
  const prefix = checkPrefix(args[0]);
  return async (ctx) => {
    const client = await ctx.client();
    const table = new TableWriter(SCHEDULE_HEADER);
    const json = new JsonArrayWriter();
    const answer = await listing(client, prefix === '' ? 'SCHEDULE LIST' : `SCHEDULE LIST ${prefix}`, parseScheduleLine, (s, rest) => {
      if (ctx.format === 'json') ctx.out.write(json.add(scheduleJson(s)));
      else if (ctx.format === 'raw') ctx.out.write(`${rest}\n`);
      else ctx.out.write(table.add(scheduleCells(s)));
      return !ctx.out.broken;
    });
    expectOk(answer);
    ctx.out.write(ctx.format === 'json' ? json.end() : ctx.format === 'raw' ? 'OK\n' : table.end());
    return 0;
  };
};

export const schedRm: Prepare = (args) => {
  const id = checkScheduleId(args[0]!);
  return async (ctx) => {
    expectOk(await single(await ctx.client(), `SCHEDULE REMOVE ${id}`));
    if (ctx.format === 'json') ctx.out.write(`${toJson({ removed: [id] })}\n`);
    else if (ctx.format === 'raw') ctx.out.write('OK\n');
    return 0;
  };
};

/**
 * The preview. The table also shows each instant in the schedule's zone, which takes the
 * schedule (a GET, pipelined with the NEXT); --json and --raw are the NEXT answer alone.
 */
export const schedNext: Prepare = (args) => {
  const id = checkScheduleId(args[0]!);
  const n = checkCount(args[1]);
  return async (ctx) => {
    const client = await ctx.client();
    const schedule = ctx.format === 'table' ? single(client, `SCHEDULE GET ${id}`) : null;
    const instants: bigint[] = [];
    const lines: string[] = [];
    const answer = listing(client, n === null ? `SCHEDULE NEXT ${id}` : `SCHEDULE NEXT ${id} ${n}`, parseInstantLine, (ns, rest) => {
      instants.push(ns);
      lines.push(rest);
    });
    const [got, next] = await Promise.all([schedule, answer]);
    expectOk(next);
    if (ctx.format === 'json') ctx.out.write(`${toJson(instants)}\n`);
    else if (ctx.format === 'raw') ctx.out.write(lines.map((l) => `${l}\n`).join('') + 'OK\n');
    else {
      let s: ScheduleLine | null = null;
      if (got?.ok === true) s = parseScheduleLine(got.body);
      const tz = s === null ? null : optionOf(s, 'tz');
      const t = new TableWriter(NEXT_HEADER);
      ctx.out.write(instants.map((ns) => t.add(nextCells(ns, tz))).join('') + t.end());
    }
    return 0;
  };
};

export const schedRun: Prepare = (args) => {
  const id = checkScheduleId(args[0]!);
  return async (ctx) => {
    const client = await ctx.client();
    const job = expectOk(await single(client, `SCHEDULE RUN ${id}`));
    if (validateIdentifier('job', job) !== null) throw unexpected(client, 'SCHEDULE RUN', job);
    if (ctx.format === 'json') ctx.out.write(`${toJson({ id, job })}\n`);
    else if (ctx.format === 'raw') ctx.out.write(`OK ${job}\n`);
    else ctx.out.write(`${job}\n`);
    return 0;
  };
};

export const schedHistory: Prepare = (args) => {
  const id = checkScheduleId(args[0]!);
  const n = checkCount(args[1]);
  return async (ctx) => {
    const client = await ctx.client();
    const table = new TableWriter(HISTORY_HEADER, { statusColumn: 1, color: ctx.color });
    const json = new JsonArrayWriter();
    const answer = await listing(client, n === null ? `SCHEDULE HISTORY ${id}` : `SCHEDULE HISTORY ${id} ${n}`, parseHistoryLine, (o, rest) => {
      if (ctx.format === 'json') ctx.out.write(json.add(historyJson(o)));
      else if (ctx.format === 'raw') ctx.out.write(`${rest}\n`);
      else ctx.out.write(table.add(historyCells(o)));
    });
    expectOk(answer);
    ctx.out.write(ctx.format === 'json' ? json.end() : ctx.format === 'raw' ? 'OK\n' : table.end());
    return 0;
  };
};
