// The OpenAPI parts of /schedules (tickd-protocol(7) HTTP INTERFACE; issue 37): the schemas,
// the parameters, the shared 404 and the operations, which lib/http/openapi.ts puts in the
// document. Like the rest of it they must stay exactly what lib/http/routes/schedules.ts
// writes and reads (scheduleToJson, occurrenceToJson, scheduleFromBody), and every example is
// checked against its schema (test/unit/http/openapi.test.ts; test/unit/http/routes/
// schedules.test.ts also reads each input example through the route's own parser).
import { DEFAULT_KEEP, MAX_KEEP } from '../domain/schedule.ts';
import { MAX_PAGE_ENTRIES } from '../domain/page.ts';
import { DEFAULT_PAGE_ENTRIES } from './list-page.ts';
import { DEFAULT_NEXT, DEFAULT_OCCURRENCES, MAX_LISTED } from './routes/schedules.ts';
import type { JsonValue } from './json.ts';

type Obj = { [key: string]: JsonValue };
type Examples = Readonly<Record<string, readonly [string, JsonValue]>>;

const ref = (name: string): Obj => ({ $ref: `#/components/schemas/${name}` });
const closed = (required: readonly string[], properties: Obj, extra: Obj = {}): Obj =>
  ({ type: 'object', required: [...required], properties, additionalProperties: false, ...extra });
const EXACT = 'Written as an exact integer; past 2^53 an IEEE-754 double (JavaScript\'s JSON.parse, many JSON libraries) rounds it, so parse it as a 64-bit integer.';
const ns = (what: string): Obj => ({ type: 'integer', format: 'int64', description: `${what} ${EXACT}` });
const orNull = (schema: Obj, description: string): Obj => ({ anyOf: [schema, { type: 'null' }], description });
const DURATION: Obj = { type: 'string', pattern: '^([0-9]{1,19}(ns|us|ms|s|m|h|d))+$', examples: ['30s', '1h30m', '250ms'] };
const duration = (description: string): Obj => ({ ...DURATION, description });
const MAX_LIMIT = 2 ** 31 - 1;
const MISSED: Obj = { enum: ['skip', 'once', 'all'] };
const OVERLAP: Obj = { enum: ['allow', 'skip', 'queue'] };
const OUTCOMES = ['planned', 'triggered', 'executed', 'failed', 'removed', 'held', 'skipped'];

/** The fields of a schedule as answers write them, in their order. */
const scheduleProperties: Obj = {
  id: ref('Identifier'),
  cron: { type: ['string', 'null'], description: 'The cron expression (5 fields, or 6 with seconds first), read in `tz`; null when `every` is set.' },
  every: orNull(DURATION, 'The fixed interval, aligned to `start` when given, else to the Unix epoch; null when `cron` is set.'),
  tz: { type: 'string', description: 'The IANA time zone the cron fields are read in (default UTC).' },
  start: orNull(ns('No occurrence before this instant (inclusive), nanoseconds since the Unix epoch.'), 'null: no start.'),
  end: orNull(ns('No occurrence at or after this instant (exclusive), nanoseconds since the Unix epoch.'), 'null: no end.'),
  limit: orNull({ type: 'integer', minimum: 1, maximum: MAX_LIMIT }, 'How many occurrences run at most (skipped ones do not count); null: no limit.'),
  jitter: duration('Each occurrence fires up to this much after its nominal time, derived from the schedule and the time (never rolled again). Default 0s.'),
  missed: { ...MISSED, description: 'What happens to occurrences missed while the daemon was down or the schedule paused: skip them all, run the latest `once` (default), or run `all` within `catchup`.' },
  catchup: duration('How far back `missed: all` runs what was missed; older ones are skipped. Default 1h.'),
  overlap: { ...OVERLAP, description: 'When an occurrence is due while the previous one still runs: `allow` it (default), `skip` it, or `queue` it (at most one waiting). Whatever the policy, one that comes round while 1000 of the schedule\'s occurrences are planned or running is skipped for overlap; a `missed: all` catch-up waits for room instead (tickd-protocol(7) Overlap).' },
  paused: { type: 'boolean', description: 'A paused schedule fires nothing; on resume what fell in the pause follows `missed`.' },
  keep: { type: 'integer', minimum: 0, maximum: MAX_KEEP, description: `Executed, and failed, occurrence jobs kept of each outcome; older ones are removed (default ${DEFAULT_KEEP}).` },
  next: orNull(ns('The next nominal time not decided yet, nanoseconds since the Unix epoch.'), 'null when none is left (end, limit).'),
  fired: { type: 'integer', minimum: 0, description: 'Occurrences fired so far (manual runs not counted): `limit` counts these.' },
  skipped: closed(['missed', 'overlap'], {
    missed: { type: 'integer', minimum: 0, description: 'Occurrences skipped as missed.' },
    overlap: { type: 'integer', minimum: 0, description: 'Occurrences skipped because the previous one still ran (or 1000 still waited or ran).' },
  }, { description: 'Skipped occurrences, by reason.' }),
};
const SCHEDULE_REQUIRED = Object.keys(scheduleProperties);

/** What ScheduleInput takes for `start` and `end`. */
const instantIn = (which: string): Obj => ({
  anyOf: [
    { type: 'string', format: 'date-time', description: 'RFC 3339 with Z or a numeric offset.' },
    ns('Nanoseconds since the Unix epoch (read exactly, beyond 2^53 too).'),
    { type: 'null' },
  ],
  description: `${which} An RFC 3339 time or integer nanoseconds; null or absent: none.`,
});

export const SCHEDULE_SCHEMAS: Record<string, Obj> = {
  Schedule: closed(SCHEDULE_REQUIRED, scheduleProperties, { description: 'A schedule with every field filled in (defaults shown), its next occurrence and its counts.' }),
  ScheduleRun: closed([...SCHEDULE_REQUIRED, 'job'], { ...scheduleProperties, job: { ...ref('Identifier'), description: 'The job of the manual occurrence just made (`<schedule id>:manual-<time>`).' } }, {
    description: 'The answer of POST /schedules/{id}/run: the schedule and the job of the manual occurrence.',
  }),
  ScheduleInput: {
    type: 'object',
    description: 'A schedule to store: exactly one of `cron` and `every`; every other field is optional and takes its default when absent or null. An `id`, if present, must equal the path id; `next`, `fired` and `skipped` (what an answer holds) are ignored, so a schedule read with GET may be sent back as is. Any other field is refused (400 naming it).',
    properties: {
      id: ref('Identifier'),
      cron: { type: ['string', 'null'], maxLength: 256, description: 'A cron expression: 5 fields, or 6 with seconds first; ranges, steps, lists, L, W and #. Day of month and day of week are ORed (as Vixie cron).' },
      every: orNull(DURATION, 'A fixed interval from 1s to 366d, such as "30s", "5m" or "1h30m".'),
      tz: { type: ['string', 'null'], description: 'An IANA time zone name (default UTC).' },
      start: instantIn('No occurrence before this instant (inclusive).'),
      end: instantIn('No occurrence at or after this instant (exclusive); after start.'),
      limit: orNull({ type: 'integer', minimum: 1, maximum: MAX_LIMIT }, 'How many occurrences run at most.'),
      jitter: orNull(DURATION, 'Up to this much after each nominal time (at most 1d, shorter than `every`; default 0s).'),
      missed: orNull(MISSED, 'The missed-run policy (default once).'),
      catchup: orNull(DURATION, 'How far back `missed: all` runs (more than 0s, at most 366d; default 1h).'),
      overlap: orNull(OVERLAP, 'The overlap policy (default allow).'),
      paused: { type: ['boolean', 'null'], description: 'Created or kept paused (default false).' },
      keep: orNull({ type: 'integer', minimum: 0, maximum: MAX_KEEP }, `Occurrence jobs kept of each outcome (default ${DEFAULT_KEEP}).`),
      next: { description: 'Ignored (read-only).' },
      fired: { description: 'Ignored (read-only).' },
      skipped: { description: 'Ignored (read-only).' },
    },
    additionalProperties: false,
    oneOf: [
      { required: ['cron'], properties: { cron: { type: 'string' } } },
      { required: ['every'], properties: { every: { type: 'string' } } },
    ],
  },
  ScheduleList: closed(['schedules'], { schedules: { type: 'array', items: ref('Schedule') } }, { description: 'One page of schedules.' }),
  NextOccurrences: closed(['next'], {
    next: { type: 'array', items: ns('A nominal time, nanoseconds since the Unix epoch.'), description: 'The next nominal times, earliest first; fewer when the schedule ends sooner.' },
  }),
  Occurrence: closed(['nominal', 'job', 'outcome'], {
    nominal: ns('The nominal time (a manual run\'s: when it was asked for; a skipped range\'s: its last), nanoseconds since the Unix epoch.'),
    job: { anyOf: [ref('Identifier'), { type: 'null' }], description: 'The occurrence\'s job; null for a skip.' },
    outcome: { enum: OUTCOMES, description: 'The job\'s status (`removed` once retention removed it; `held`: queued behind a running one), or `skipped`.' },
    reason: { enum: ['missed', 'overlap'], description: 'Why it was skipped (skips only).' },
    from: ns('A skipped range\'s first nominal time, nanoseconds since the Unix epoch (skips only).'),
    count: { type: 'integer', minimum: 1, description: 'How many nominal times the skipped range holds (skips only).' },
    manual: { type: 'boolean', const: true, description: 'Present for a manual run (run now).' },
  }),
  Occurrences: closed(['occurrences'], { occurrences: { type: 'array', items: ref('Occurrence'), description: 'Newest first.' } }),
};

export const SCHEDULE_PARAMETERS: Obj = {
  ScheduleId: {
    name: 'id', in: 'path', required: true, schema: ref('Identifier'), example: 'backup.nightly',
    description: 'The schedule identifier (at most 990 bytes: its occurrences\' job identifiers add to it), percent-decoded before validation.',
  },
  NextCount: { name: 'n', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_LISTED, default: DEFAULT_NEXT }, example: 10, description: 'How many nominal times.' },
  HistoryLimit: { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_LISTED, default: DEFAULT_OCCURRENCES }, example: 20, description: 'How many entries at most.' },
};

const says = (message: string): JsonValue => ({ error: message });
const examplesOf = (examples: Examples): Obj =>
  Object.fromEntries(Object.entries(examples).map(([name, [summary, value]]) => [name, { summary, value }]));
const json = (schema: Obj, examples: Examples): Obj => ({ 'application/json': { schema, examples: examplesOf(examples) } });

export const SCHEDULE_RESPONSES: Obj = {
  ScheduleNotFound: { description: 'No such schedule.', content: json(ref('Error'), { schedule: ['No such schedule', says('schedule "backup.nightly" does not exist')] }) },
};

// Examples. Nanoseconds are bigints: written exactly. NIGHTLY is what NIGHTLY_IN reads to
// (checked by the unit tests), as REPORT is REPORT_IN's.
const NIGHTLY_IN = { cron: '30 2 * * *', tz: 'Europe/Berlin' };
const NIGHTLY = {
  id: 'backup.nightly', cron: '30 2 * * *', every: null, tz: 'Europe/Berlin', start: null, end: null, limit: null,
  jitter: '0s', missed: 'once', catchup: '1h', overlap: 'allow', paused: false, keep: 10,
  next: 1795829400000000000n, fired: 41, skipped: { missed: 2, overlap: 0 },
};
const REPORT_IN = { every: '30s', start: '2030-01-01T00:00:00Z', end: 1893542400000000000n, limit: 100, jitter: '5s', missed: 'skip', overlap: 'skip' };
const REPORT = {
  id: 'report.sync', cron: null, every: '30s', tz: 'UTC', start: 1893456000000000000n, end: 1893542400000000000n, limit: 100,
  jitter: '5s', missed: 'skip', catchup: '1h', overlap: 'skip', paused: false, keep: 10,
  next: 1893456000000000000n, fired: 0, skipped: { missed: 0, overlap: 0 },
};
const PAUSED = { ...NIGHTLY, paused: true };
const HISTORY = [
  { nominal: 1795774500000000000n, job: 'backup.nightly:manual-20261127T101500Z', outcome: 'executed', manual: true },
  { nominal: 1795743000000000000n, job: 'backup.nightly:20261127T013000Z', outcome: 'executed' },
  { nominal: 1795656600000000000n, job: null, outcome: 'skipped', reason: 'missed', from: 1795570200000000000n, count: 2 },
  { nominal: 1795483800000000000n, job: 'backup.nightly:20261124T013000Z', outcome: 'failed' },
  { nominal: 1795397400000000000n, job: 'backup.nightly:20261123T013000Z', outcome: 'removed' },
];

/** Input examples by name (the unit tests read each through the route's parser). */
export const SCHEDULE_INPUT_EXAMPLES = {
  cron: ['A cron expression in a time zone, every other field defaulted', NIGHTLY_IN],
  every: ['An interval with bounds, a limit, jitter and policies', REPORT_IN],
  readBack: ['A schedule read with GET, sent back as is', NIGHTLY],
} as const satisfies Examples;
/** What each input example is stored as (beside next, fired and skipped). */
export const SCHEDULE_STORED_EXAMPLES = { cron: NIGHTLY, every: REPORT, readBack: NIGHTLY } as const;

/** The shape of an operation lib/http/openapi.ts turns into the document (its `Op`). */
export interface ScheduleOp {
  readonly id: string;
  readonly tag: 'schedules';
  readonly summary: string;
  readonly description: string;
  readonly params: readonly string[];
  readonly body?: { readonly schema: string; readonly examples: Examples };
  readonly ok: Obj;
  readonly bad: Examples;
  readonly errors: Readonly<Record<string, string>>;
}

const NAMESPACE = 'With an auth_file, only schedules inside the token\'s namespace can be seen or changed (403 outside it); their occurrence jobs lie inside it too.';
const FOUND = { '403': 'Forbidden', '404': 'ScheduleNotFound' };
const badId: readonly [string, JsonValue] = ['The path identifier is not valid', says('schedule identifier contains invalid character space (allowed: letters, digits, . - _ :)')];
const ok = (description: string, schema: string, examples: Examples, headers?: Obj): Obj =>
  ({ '200': { description, content: json(ref(schema), examples), ...(headers !== undefined && { headers }) } });
const scheduleOk = (description: string, examples: Examples): Obj => ok(description, 'Schedule', examples);
const PAGE_HEADERS: Obj = {
  Link: {
    description: 'Present while more entries may follow: `<URL of the next page>; rel="next"` (RFC 8288). Follow it until it is absent. A page holds `limit` entries unless it is the last.',
    schema: { type: 'string' },
    example: '</schedules?prefix=backup.&limit=2&cursor=17>; rel="next"',
  },
};

export const SCHEDULE_OPS = {
  list: {
    id: 'listSchedules', tag: 'schedules', summary: 'List schedules, optionally by identifier prefix', params: ['Prefix', 'Limit', 'Cursor'],
    description: `Schedules whose identifier starts with \`prefix\` (all without it), as {"schedules": [...]}. Paged like GET /jobs: at most \`limit\` entries (default ${DEFAULT_PAGE_ENTRIES}, at most ${MAX_PAGE_ENTRIES}) per response, in no particular order; a Link header names the next page. With an auth_file, the list is narrowed to the token's namespace.`,
    ok: ok('Schedules, one page.', 'ScheduleList', { page: ['A page of schedules', { schedules: [NIGHTLY, REPORT] }], empty: ['Nothing matches', { schedules: [] }] }, PAGE_HEADERS),
    bad: { limit: ['limit out of range', says(`query parameter limit must be an integer from 1 to ${MAX_PAGE_ENTRIES}`)] },
    errors: {},
  },
  put: {
    id: 'putSchedule', tag: 'schedules', summary: 'Create or replace a schedule', params: ['ScheduleId'],
    description: `Stores the schedule; its occurrences become jobs \`<id>:<nominal time, UTC, basic ISO 8601>\` (\`backup.nightly:20261128T013000Z\`), run by the longest rule pattern matching them. Replacing a schedule keeps how far its occurrences are decided: none is decided twice. Fields are checked exactly as TCP SCHEDULE SET checks them; the first refused is named. ${NAMESPACE}`,
    body: { schema: 'ScheduleInput', examples: SCHEDULE_INPUT_EXAMPLES },
    ok: scheduleOk('The schedule as stored, every default filled in, with its next occurrence.', { cron: ['A cron schedule', NIGHTLY], every: ['An interval schedule', REPORT] }),
    bad: {
      both: ['Both cron and every', says('every: give exactly one of cron and every')],
      cron: ['A cron expression with a value out of range', says('cron: Invalid value for hour: 25')],
      tz: ['An unknown time zone', says('tz: "Europe/Berlinn" is not a time zone this tickd\'s zone database knows')],
      unknown: ['A field schedules do not have', says('interval: unknown field (known: cron, every, tz, start, end, limit, jitter, missed, catchup, overlap, paused, keep)')],
      json: ['The body is not JSON', says('request body is not valid JSON')],
      twice: ['A key given twice in the body', says('every: given twice')],
      id: badId,
    },
    errors: { '403': 'Forbidden', '413': 'PayloadTooLarge', '415': 'UnsupportedMediaType' },
  },
  get: {
    id: 'getSchedule', tag: 'schedules', summary: 'Read a schedule', params: ['ScheduleId'],
    description: `The schedule with every field, its next occurrence and its counts. ${NAMESPACE}`,
    ok: scheduleOk('The schedule.', { cron: ['A cron schedule', NIGHTLY], every: ['An interval schedule', REPORT] }), bad: { id: badId }, errors: FOUND,
  },
  delete: {
    id: 'deleteSchedule', tag: 'schedules', summary: 'Delete a schedule', params: ['ScheduleId'],
    description: `Removes the schedule: no further occurrence is made. Occurrence jobs already made stay, as any job. ${NAMESPACE}`,
    ok: { '204': { description: 'Deleted; no body.' } }, bad: { id: badId }, errors: FOUND,
  },
  next: {
    id: 'getScheduleNext', tag: 'schedules', summary: 'Preview the next occurrences', params: ['ScheduleId', 'NextCount'],
    description: `The next \`n\` nominal times after now by the calendar (cron and time zone, or interval; start, end), paused or not, so what will happen can be seen before it does: DST gaps and repeats show as they will fall. Default ${DEFAULT_NEXT}, at most ${MAX_LISTED}. ${NAMESPACE}`,
    ok: ok('The nominal times.', 'NextOccurrences', { nightly: ['02:30 in Berlin, every day', { next: [1795829400000000000n, 1795915800000000000n, 1796002200000000000n] }], over: ['A schedule past its end', { next: [] }] }),
    bad: { n: ['n out of range', says(`query parameter n must be an integer from 1 to ${MAX_LISTED}`)], id: badId }, errors: FOUND,
  },
  occurrences: {
    id: 'getScheduleOccurrences', tag: 'schedules', summary: 'Recent occurrences and their outcomes', params: ['ScheduleId', 'HistoryLimit'],
    description: `The latest occurrences, newest first: each nominal time with its job and the job's status, or the skipped range and why. Default ${DEFAULT_OCCURRENCES}, at most ${MAX_LISTED}. ${NAMESPACE}`,
    ok: ok('The history.', 'Occurrences', { history: ['Runs, a manual run and a skip', { occurrences: HISTORY }], none: ['Nothing yet', { occurrences: [] }] }),
    bad: { limit: ['limit out of range', says(`query parameter limit must be an integer from 1 to ${MAX_LISTED}`)], id: badId }, errors: FOUND,
  },
  pause: {
    id: 'pauseSchedule', tag: 'schedules', summary: 'Pause a schedule', params: ['ScheduleId'],
    description: `Stops the schedule firing until it is resumed (the same as PUT with \`paused: true\`). ${NAMESPACE}`,
    ok: scheduleOk('The schedule, paused.', { paused: ['Paused', PAUSED] }), bad: { id: badId }, errors: FOUND,
  },
  resume: {
    id: 'resumeSchedule', tag: 'schedules', summary: 'Resume a schedule', params: ['ScheduleId'],
    description: `Lets the schedule fire again. No burst: the occurrences that fell in the pause follow its \`missed\` policy. ${NAMESPACE}`,
    ok: scheduleOk('The schedule, resumed.', { resumed: ['Resumed', NIGHTLY] }), bad: { id: badId }, errors: FOUND,
  },
  run: {
    id: 'runSchedule', tag: 'schedules', summary: 'Run a schedule now', params: ['ScheduleId'],
    description: `Makes one extra occurrence, marked manual, due at once (paused or not); it counts for neither \`limit\` nor \`fired\`. At most 1000 manual runs of a schedule wait or run at once: one more is refused (400). ${NAMESPACE}`,
    ok: ok('The schedule and the manual occurrence\'s job.', 'ScheduleRun', { run: ['Run now', { ...NIGHTLY, job: 'backup.nightly:manual-20261127T101500Z' }] }),
    bad: { id: badId, busy: ['1000 manual runs not ended yet', says('run: 1000 manual runs of schedule backup.nightly have not ended yet; the most it holds')] }, errors: FOUND,
  },
} as const satisfies Record<string, ScheduleOp>;
