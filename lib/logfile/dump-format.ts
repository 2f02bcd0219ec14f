// How `tickd dump` shows one record (tickd(8) THE DUMP SUBCOMMAND). Two forms:
//
// text: every line is a valid protocol command, `<request_id> <instruction> <args...>`, whose
// request id says what the record is, so `tickd dump LOGFILE | nc host port` replays the
// history into a daemon and a person reads the status in the first column:
//   <status> SET <id> <execution_ns>          (status: planned, triggered, executed, failed; a
//                                              job's attempt and retry time, which no command
//                                              sets, show in the JSON form only)
//   rule RULE SET <id> <pattern> [<options>] <kind> <runner args as in LISTRULES>
//   removed REMOVE <id>
//   removed REMOVERULE <id>
//   schedule SCHEDULE SET <id> <key=value...> (a schedule; its progress, which no command sets,
//                                              shows in the JSON form only)
//   removed SCHEDULE REMOVE <id>
//   format FORMAT <version>                   (a format mark; FORMAT is no instruction, and a
//                                              daemon ignores a line whose instruction it does not
//                                              know, tickd-protocol(7): the mark changes no state)
// Arguments are quoted as in tickd-protocol(7) COMMANDS, under LISTRULES
// (lib/domain/arguments.ts).
//
// json: one object per line; `execution` is an exact integer, never rounded.
//   {"type":"job","id":...,"execution":1775822400123456789,"status":"planned"}
//     (a job a retry policy touched adds "attempt":N, and "retry_at":<ns> while it waits)
//   {"type":"rule","id":...,"pattern":...,"runner":{"type":"shell","command":...}}
//     (a rule with options adds "retry", "concurrency", "rate", "on" as the HTTP rule object has them)
//   {"type":"job.removed","id":...}   {"type":"rule.removed","id":...}   {"type":"format","version":2}
//   {"type":"schedule","id":...,"cron"|"every":...,... every field, "decided":...,"fired":...,...}
//   {"type":"schedule.removed","id":...}
// Runners use the HTTP object form of tickd-protocol(7) HTTP INTERFACE for every kind, written
// by the same function as the HTTP API's (runnerToJson).
import { formatRuleArgs, quoteArg } from '../domain/arguments.ts';
import { runnerToJson } from '../domain/runner-spec.ts';
import { optionsToJson } from '../domain/rule-options.ts';
import type { Job } from '../domain/job.ts';
import type { LogRecord } from '../engine/journal.ts';
import type { ScheduleState } from '../domain/schedule.ts';
import { scheduleFields, scheduleOptionPairs } from '../schedule/fields.ts';

export type DumpFormat = 'text' | 'json';

export function formatRecord(rec: LogRecord, format: DumpFormat): string {
  return format === 'json' ? formatJson(rec) : formatText(rec);
}

export function formatText(rec: LogRecord): string {
  switch (rec.t) {
    case 'job':
      return `${rec.job.status} SET ${quoteArg(rec.job.id)} ${rec.job.execution}`;
    case 'rule':
      return `rule RULE SET ${formatRuleArgs(rec.rule)}`;
    case 'job.removed':
      return `removed REMOVE ${quoteArg(rec.id)}`;
    case 'rule.removed':
      return `removed REMOVERULE ${quoteArg(rec.id)}`;
    case 'format':
      return `format FORMAT ${rec.version}`;
    case 'schedule':
      return `schedule SCHEDULE SET ${[rec.state.schedule.id, ...scheduleOptionPairs(rec.state.schedule).map(([k, v]) => `${k}=${v}`)].map(quoteArg).join(' ')}`;
    case 'schedule.removed':
      return `removed SCHEDULE REMOVE ${quoteArg(rec.id)}`;
  }
}

export function formatJson(rec: LogRecord): string {
  const s = JSON.stringify;
  switch (rec.t) {
    case 'job':
      return `{"type":"job","id":${s(rec.job.id)},"execution":${rec.job.execution},"status":${s(rec.job.status)}${retryJson(rec.job)}}`;
    case 'rule': {
      const options = Object.entries(optionsToJson(rec.rule.options)).map(([k, x]) => `,${s(k)}:${s(x)}`).join('');
      return `{"type":"rule","id":${s(rec.rule.id)},"pattern":${s(rec.rule.pattern)},"runner":${s(runnerToJson(rec.rule.runner))}${options}}`;
    }
    case 'job.removed':
      return `{"type":"job.removed","id":${s(rec.id)}}`;
    case 'rule.removed':
      return `{"type":"rule.removed","id":${s(rec.id)}}`;
    case 'format':
      return `{"type":"format","version":${rec.version}}`;
    case 'schedule':
      return scheduleJson(rec.state);
    case 'schedule.removed':
      return `{"type":"schedule.removed","id":${s(rec.id)}}`;
  }
}

/** A job's retry state, as members to append (none for a job no retry policy touched). */
function retryJson(job: Job): string {
  if (job.attempt === undefined) return '';
  return `,"attempt":${job.attempt}${job.retryAt === undefined ? '' : `,"retry_at":${job.retryAt}`}`;
}

function scheduleJson(st: ScheduleState): string {
  const s = JSON.stringify;
  const v = (x: unknown): string => (typeof x === 'bigint' ? x.toString() : s(x));
  const fields = scheduleFields(st.schedule).map(([k, x]) => `${s(k)}:${v(x)}`).join(',');
  const list = (xs: readonly bigint[]): string => `[${xs.join(',')}]`;
  const skips = st.skips.map((k) => `{"reason":${s(k.reason)},"from":${k.from},"to":${k.to},"count":${k.count}}`).join(',');
  return `{"type":"schedule","id":${s(st.schedule.id)},${fields},"decided":${st.decided},"next":${v(st.next)},"fired":${st.fired},`
    + `"skipped":{"missed":${st.skippedMissed},"overlap":${st.skippedOverlap}},"held":${v(st.held)},`
    + `"fires":${list(st.fires)},"manual":${list(st.manual)},"skips":[${skips}]}`;
}
