// The commands of `tickd ctl`, as data: their words, arguments, one-line summary, which output
// options and command options they take. One table read by the argument scanner, the help
// text, the interactive prompt's completion, the shell completion scripts and the man page
// test (test/integration/ctl-man.test.ts), so none of them can drift from the others;
// commands.ts maps every name to its implementation (a Record over CommandName, so the
// compiler rejects a command without one).

/** Output options a command accepts; `table` is the default of the ones that print data. */
export type Format = 'json' | 'raw';

export interface CommandInfo {
  readonly name: string;
  /** Argument synopsis as the man page and help show it. */
  readonly args: string;
  readonly summary: string;
  readonly min: number;
  /** Most positional arguments; Infinity for lists. */
  readonly max: number;
  readonly formats: readonly Format[];
  /** Command options (beyond the global ones) it accepts. */
  readonly options: readonly string[];
  /** After this many arguments every word is literal: `rule set`'s runner arguments may look like options. */
  readonly literalAfter?: number;
  /**
   * From this argument on, words holding `=` do not count toward literalAfter: `rule set`'s
   * rule options stand between its pattern and its runner, which is where the literal words start.
   */
  readonly keyValuesFrom?: number;
  /** Whether it talks to a daemon. */
  readonly connects: boolean;
}

const ALL: readonly Format[] = ['json', 'raw'];

export const COMMANDS = [
  { name: 'job set', args: 'ID WHEN', summary: 'create the job, or move it: planned at WHEN', min: 2, max: 3, formats: ALL, options: [], connects: true },
  { name: 'job get', args: 'ID', summary: 'show one job, how many attempts are recorded for it and how the last ended', min: 1, max: 1, formats: ALL, options: [], connects: true },
  { name: 'job ls', args: '[PREFIX]', summary: 'list the jobs whose identifier starts with PREFIX', min: 0, max: 1, formats: ALL, options: [], connects: true },
  { name: 'job rm', args: 'ID...', summary: 'remove jobs', min: 1, max: Infinity, formats: ALL, options: [], connects: true },
  { name: 'job retry', args: 'ID', summary: 'run a failed job again now, its attempts afresh', min: 1, max: 1, formats: ALL, options: [], connects: true },
  { name: 'job import', args: '[FILE]', summary: 'set the jobs of ID WHEN lines (or JSON lines) from FILE or stdin, pipelined', min: 0, max: 1, formats: ['json'], options: [], connects: true },
  { name: 'job export', args: '[PREFIX]', summary: 'write jobs as ID NANOSECONDS lines, the format import reads', min: 0, max: 1, formats: ['json'], options: ['all'], connects: true },
  { name: 'rule set', args: 'ID PATTERN [OPTION=VALUE...] RUNNER ARGS...', summary: 'create or replace a rule; options (retry.attempts=5, concurrency=4, ...), the runner and its arguments as separate words', min: 4, max: Infinity, formats: ALL, options: [], literalAfter: 3, keyValuesFrom: 2, connects: true },
  { name: 'rule ls', args: '[PREFIX]', summary: 'list the rules whose identifier starts with PREFIX', min: 0, max: 1, formats: ALL, options: [], connects: true },
  { name: 'rule rm', args: 'ID...', summary: 'remove rules', min: 1, max: Infinity, formats: ALL, options: [], connects: true },
  { name: 'sched set', args: 'ID KEY=VALUE...', summary: 'create or replace a schedule: cron= or every=, and optional fields (tz=, missed=, ...)', min: 2, max: Infinity, formats: ALL, options: [], connects: true },
  { name: 'sched get', args: 'ID', summary: 'show one schedule, every field', min: 1, max: 1, formats: ALL, options: [], connects: true },
  { name: 'sched ls', args: '[PREFIX]', summary: 'list the schedules whose identifier starts with PREFIX', min: 0, max: 1, formats: ALL, options: [], connects: true },
  { name: 'sched rm', args: 'ID', summary: 'remove a schedule', min: 1, max: 1, formats: ALL, options: [], connects: true },
  { name: 'sched next', args: 'ID [N]', summary: 'preview the next N occurrences (default 5, at most 100)', min: 1, max: 2, formats: ALL, options: [], connects: true },
  { name: 'sched pause', args: 'ID', summary: 'pause a schedule: its occurrences stop firing until it is resumed', min: 1, max: 1, formats: ALL, options: [], connects: true },
  { name: 'sched resume', args: 'ID', summary: 'resume a schedule; what fell in the pause follows its missed policy', min: 1, max: 1, formats: ALL, options: [], connects: true },
  { name: 'sched run', args: 'ID', summary: 'run now: one extra occurrence, marked manual; prints its job', min: 1, max: 1, formats: ALL, options: [], connects: true },
  { name: 'sched history', args: 'ID [N]', summary: 'the latest N occurrences and skips, newest first (default 10, at most 100)', min: 1, max: 2, formats: ALL, options: [], connects: true },
  { name: 'stat', args: '', summary: 'the daemon\'s statistics', min: 0, max: 0, formats: ALL, options: [], connects: true },
  { name: 'ping', args: '', summary: 'exit 0 when the daemon answers (health checks)', min: 0, max: 0, formats: ALL, options: [], connects: true },
  { name: 'watch', args: '[PREFIX]', summary: 'show jobs changing status, with their lateness, and the STAT rates, live', min: 0, max: 1, formats: ['json'], options: ['interval'], connects: true },
  { name: 'completion', args: 'bash|zsh', summary: 'print a shell completion script', min: 1, max: 1, formats: [], options: [], connects: false },
  { name: 'help', args: '[COMMAND]', summary: 'list the commands, or describe one', min: 0, max: 2, formats: [], options: [], connects: false },
] as const satisfies readonly CommandInfo[];

export type CommandName = (typeof COMMANDS)[number]['name'];

/** The first words of the commands that have more than one (`job`, `rule`, `sched`). */
export const GROUPS: readonly string[] = [...new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!))];

/** The command named by the first positional words, and how many words its name takes. */
export function findCommand(words: readonly string[]): CommandInfo & { readonly name: CommandName } | null {
  for (const c of COMMANDS) {
    const parts = c.name.split(' ');
    if (parts.every((p, i) => words[i] === p)) return c;
  }
  return null;
}

export function synopsis(c: CommandInfo): string {
  return c.args === '' ? c.name : `${c.name} ${c.args}`;
}
