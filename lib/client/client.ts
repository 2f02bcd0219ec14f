// The Client: one promise-returning method per command of tickd-protocol(7) COMMANDS and
// SCHEDULES, listings as async iterators. Names follow the protocol's instructions; like
// ioredis and node-redis, a missing identifier reads as null (get, getSchedule) or false
// (remove, removeRule, removeSchedule), and every other ERROR answer rejects with a
// ReplyError carrying the protocol's code.
import { quoteArg } from '../domain/arguments.ts';
import { Core } from './core.ts';
import { ProtocolError } from './errors.ts';
import type { CallOptions } from './pending.ts';
import { parseAttemptLine, parseInstantLine, parseJobBody, parseJobLine, parseStatLine, type Answer, type Attempt, type Job } from './replies.ts';
import { call, Listing, okBody } from './requests.ts';
import { parseRuleLine, ruleSetArgs, type Rule, type RuleInput } from './rules.ts';
import { parseHistoryLine, parseScheduleLine } from './schedule-lines.ts';
import { scheduleSetArgs, toSchedule, type Occurrence, type Schedule, type ScheduleInput } from './schedules.ts';
import { toNs, type When } from './time.ts';

function unexpected(text: string, body: string): ProtocolError {
  return new ProtocolError(`unexpected answer to ${text.split(' ')[0]}: ${JSON.stringify(body.slice(0, 80))}`);
}

const ok = (a: Answer, text: string): void => {
  okBody(a, text);
};

/** not_found as `missing`, any other error thrown. */
function unlessNotFound<T>(a: Answer, text: string, missing: T, read: (body: string) => T): T {
  if (!a.ok && a.code === 'not_found') return missing;
  return read(okBody(a, text));
}

function schedule(text: string, body: string): Schedule {
  const line = parseScheduleLine(body);
  if (line === null) throw unexpected(text, body);
  return toSchedule(line);
}

async function collect<T>(listing: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of listing) out.push(item);
  return out;
}

export class Client extends Core {
  // Jobs.

  /** SET: the job planned at `when` (created, or moved whatever its status). */
  set(id: string, when: When, opts?: CallOptions): Promise<void> {
    return call(this, `SET ${quoteArg(id)} ${toNs(when)}`, true, ok, opts);
  }

  /** GET: the job, or null when it does not exist. */
  get(id: string, opts?: CallOptions): Promise<Job | null> {
    return call(this, `GET ${quoteArg(id)}`, false, (a, t) => unlessNotFound(a, t, null, (body) => {
      const job = parseJobBody(id, body);
      if (job === null) throw unexpected(t, body);
      return job;
    }), opts);
  }

  /** REMOVE: true when the job existed. */
  remove(id: string, opts?: CallOptions): Promise<boolean> {
    return call(this, `REMOVE ${quoteArg(id)}`, true, (a, t) => unlessNotFound(a, t, false, () => true), opts);
  }

  /** QUERY: the jobs whose identifier starts with `prefix` (every job without one), as they arrive. */
  listJobs(prefix = '', opts?: CallOptions): Listing<Job> {
    return new Listing(this, prefix === '' ? 'QUERY' : `QUERY ${quoteArg(prefix)}`, parseJobLine, opts);
  }

  /** ATTEMPTS: the job's last attempts, oldest first (a missing job: ReplyError not_found). */
  attempts(id: string, opts?: CallOptions): Promise<Attempt[]> {
    return collect(new Listing(this, `ATTEMPTS ${quoteArg(id)}`, parseAttemptLine, opts));
  }

  /** RETRY: a failed job planned again now, its attempts afresh; the job as planned. */
  retry(id: string, opts?: CallOptions): Promise<Job> {
    return call(this, `RETRY ${quoteArg(id)}`, true, (a, t) => {
      const body = okBody(a, t);
      const job = parseJobBody(id, body);
      if (job === null) throw unexpected(t, body);
      return job;
    }, opts);
  }

  // Rules.

  /** RULE SET: the rule created or replaced, with its options (a rule set again without them loses them). */
  setRule(rule: RuleInput, opts?: CallOptions): Promise<void> {
    return call(this, `RULE SET ${ruleSetArgs(rule)}`, true, ok, opts);
  }

  /** REMOVERULE: true when the rule existed. */
  removeRule(id: string, opts?: CallOptions): Promise<boolean> {
    return call(this, `REMOVERULE ${quoteArg(id)}`, true, (a, t) => unlessNotFound(a, t, false, () => true), opts);
  }

  /** LISTRULES: every rule (of the token's namespace), as they arrive. */
  listRules(opts?: CallOptions): Listing<Rule> {
    return new Listing(this, 'LISTRULES', parseRuleLine, opts);
  }

  // Schedules.

  /** SCHEDULE SET: the schedule created or replaced (every field not given takes its default). */
  setSchedule(id: string, fields: ScheduleInput, opts?: CallOptions): Promise<Schedule> {
    return call(this, `SCHEDULE SET ${scheduleSetArgs(id, fields)}`, true, (a, t) => schedule(t, okBody(a, t)), opts);
  }

  /** SCHEDULE GET: the schedule, or null when it does not exist. */
  getSchedule(id: string, opts?: CallOptions): Promise<Schedule | null> {
    return call(this, `SCHEDULE GET ${quoteArg(id)}`, false, (a, t) => unlessNotFound(a, t, null, (body) => schedule(t, body)), opts);
  }

  /** SCHEDULE LIST: the schedules whose identifier starts with `prefix`, as they arrive. */
  listSchedules(prefix = '', opts?: CallOptions): Listing<Schedule> {
    return new Listing(this, prefix === '' ? 'SCHEDULE LIST' : `SCHEDULE LIST ${quoteArg(prefix)}`, (rest) => {
      const line = parseScheduleLine(rest);
      return line === null ? null : toSchedule(line);
    }, opts);
  }

  /** SCHEDULE NEXT: the next `count` nominal times (1 to 100, default 5), by the calendar alone. */
  nextOccurrences(id: string, count?: number, opts?: CallOptions): Promise<bigint[]> {
    return collect(new Listing(this, `SCHEDULE NEXT ${quoteArg(id)}${count === undefined ? '' : ` ${count}`}`, parseInstantLine, opts));
  }

  /** SCHEDULE PAUSE: nothing more is decided until it is resumed. */
  pauseSchedule(id: string, opts?: CallOptions): Promise<Schedule> {
    return call(this, `SCHEDULE PAUSE ${quoteArg(id)}`, true, (a, t) => schedule(t, okBody(a, t)), opts);
  }

  /** SCHEDULE RESUME: what fell in the pause follows the missed policy. */
  resumeSchedule(id: string, opts?: CallOptions): Promise<Schedule> {
    return call(this, `SCHEDULE RESUME ${quoteArg(id)}`, true, (a, t) => schedule(t, okBody(a, t)), opts);
  }

  /** SCHEDULE RUN: one extra occurrence now, marked manual; its job's identifier. */
  runSchedule(id: string, opts?: CallOptions): Promise<string> {
    return call(this, `SCHEDULE RUN ${quoteArg(id)}`, true, (a, t) => {
      const body = okBody(a, t);
      if (body === '' || body.includes(' ')) throw unexpected(t, body);
      return body;
    }, opts);
  }

  /** SCHEDULE HISTORY: the latest `count` entries (1 to 100, default 10), newest first. */
  scheduleHistory(id: string, count?: number, opts?: CallOptions): Promise<Occurrence[]> {
    return collect(new Listing(this, `SCHEDULE HISTORY ${quoteArg(id)}${count === undefined ? '' : ` ${count}`}`, parseHistoryLine, opts));
  }

  /** SCHEDULE REMOVE: true when the schedule existed; its planned occurrence jobs go with it. */
  removeSchedule(id: string, opts?: CallOptions): Promise<boolean> {
    return call(this, `SCHEDULE REMOVE ${quoteArg(id)}`, true, (a, t) => unlessNotFound(a, t, false, () => true), opts);
  }

  // The daemon.

  /** STAT: every metric, key to value, in the daemon's order (tickd-protocol(7) STATISTICS). */
  async stat(opts?: CallOptions): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const [k, v] of await collect(new Listing(this, 'STAT', parseStatLine, opts))) out[k] = v;
    return out;
  }

  /** A round trip (a STAT, as the protocol has no PING): its duration in nanoseconds. */
  async ping(opts?: CallOptions): Promise<bigint> {
    const t0 = process.hrtime.bigint();
    await this.stat(opts);
    return process.hrtime.bigint() - t0;
  }
}

