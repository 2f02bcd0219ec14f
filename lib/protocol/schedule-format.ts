// The TCP text of the schedule replies (tickd-protocol(7) SCHEDULES): a schedule line, the
// lines of SCHEDULE LIST, NEXT and HISTORY. Called by format.ts, which owns the rest of the
// protocol's text and has already made the request id one line.
//
// A schedule line is `<id> <key=value>... next=<ns|none> fired=<n> skipped_missed=<n>
// skipped_overlap=<n>`: the options are scheduleOptionPairs (lib/schedule/fields.ts) in their
// canonical order, each quoted as one whole token when it needs quotes (`"cron=0 30 2 * * *"`),
// so the line without its request id and its counters reads back through SCHEDULE SET to the
// same schedule. The counters come last and never look like a field SET takes.
import type { Reply } from '../domain/command.ts';
import type { OccurrenceView, ScheduleView } from '../domain/schedule.ts';
import { quoteArg } from '../domain/arguments.ts';
import { scheduleOptionPairs } from '../schedule/fields.ts';

type ScheduleReply = Extract<Reply, { kind: 'schedule' | 'schedules' | 'instants' | 'occurrences' }>;

/** One schedule as a line's text (no request id, no line end). */
export function scheduleLine(view: ScheduleView): string {
  const { schedule, fired, skippedMissed, skippedOverlap } = view.state;
  const parts = [quoteArg(schedule.id)];
  for (const [key, value] of scheduleOptionPairs(schedule)) parts.push(quoteArg(`${key}=${value}`));
  parts.push(`next=${view.next ?? 'none'}`, `fired=${fired}`, `skipped_missed=${skippedMissed}`, `skipped_overlap=${skippedOverlap}`);
  return parts.join(' ');
}

/** A HISTORY entry: `<nominal> <outcome> <job|->`, a skip's range, a manual run's mark. */
function occurrenceLine(o: OccurrenceView): string {
  let line = `${o.nominal} ${o.outcome} ${o.job === null ? '-' : quoteArg(o.job)}`;
  if (o.reason !== undefined) line += ` reason=${o.reason} from=${o.from ?? o.nominal} count=${o.count ?? 1}`;
  if (o.manual === true) line += ' manual';
  return line;
}

/** Entry lines of one page of SCHEDULE LIST (no terminal line), as formatPageLines gives a QUERY's. */
export function scheduleLines(rid: string, schedules: readonly ScheduleView[], terminal: boolean): string {
  const lines = new Array<string>(schedules.length + (terminal ? 1 : 0));
  for (let i = 0; i < schedules.length; i++) lines[i] = `${rid} ${scheduleLine(schedules[i]!)}\n`;
  if (terminal) lines[schedules.length] = `${rid} OK\n`;
  return lines.join('');
}

/** The whole response to a schedule reply; `rid` is already one line (format.ts). */
export function formatScheduleReply(rid: string, reply: ScheduleReply): string {
  switch (reply.kind) {
    case 'schedule':
      // RUN answers the job it made; every other single-schedule reply, the schedule.
      return reply.job !== undefined ? `${rid} OK ${quoteArg(reply.job)}\n` : `${rid} OK ${scheduleLine(reply.schedule)}\n`;
    case 'schedules':
      return scheduleLines(rid, reply.schedules, true);
    case 'instants':
      return [...reply.instants.map((ns) => `${rid} ${ns}\n`), `${rid} OK\n`].join('');
    case 'occurrences':
      return [...reply.occurrences.map((o) => `${rid} ${occurrenceLine(o)}\n`), `${rid} OK\n`].join('');
    default: {
      const never: never = reply;
      return never;
    }
  }
}
