// The help text of `tickd ctl`, written from the command and option tables.
import { CTL_OPTIONS, type OptionInfo } from './args.ts';
import { COMMANDS, findCommand, synopsis, type CommandInfo } from './command-list.ts';
import { UsageError } from './errors.ts';
import { WHEN_FORMS } from './when.ts';

function optionTag(name: string, o: OptionInfo): string {
  return `${o.short === undefined ? '   ' : `-${o.short},`} --${name}${o.value === undefined ? '' : ` ${o.value}`}`;
}

function commandLines(list: readonly CommandInfo[]): string {
  const width = Math.max(...list.map((c) => synopsis(c).length));
  return list.map((c) => `  ${synopsis(c).padEnd(width)}  ${c.summary}\n`).join('');
}

export function usage(): string {
  const opts = Object.entries(CTL_OPTIONS as Record<string, OptionInfo>);
  const width = Math.max(...opts.map(([n, o]) => optionTag(n, o).length));
  const optionLines = opts.map(([n, o]) => `  ${optionTag(n, o).padEnd(width)}  ${o.help}${o.env === undefined ? '' : ` [${o.env}]`}\n`).join('');
  return `Usage: tickd ctl [OPTIONS] COMMAND [ARGUMENTS]
       tickd ctl [OPTIONS]          an interactive prompt (on a terminal)

Commands:
${commandLines(COMMANDS)}
Options (anywhere on the line):
${optionLines}
WHEN: ${WHEN_FORMS}.
The token may also come from TICKD_TOKEN. Output: a table, --json or --raw.
Exit status: 0 success, 1 the daemon answered an error, 2 usage error,
3 cannot connect, TLS or AUTH failed, or timed out. See tickd-ctl(1).
`;
}

/** `help`, `help job`, `help job set`. */
export function helpFor(words: readonly string[]): string {
  if (words.length === 0) return usage();
  const c = findCommand(words);
  if (c !== null) {
    const own = c.options.map((n) => `  --${n}  ${(CTL_OPTIONS as Record<string, OptionInfo>)[n]!.help}\n`).join('');
    const formats = c.formats.length === 0 ? '' : `Output: a table${c.formats.map((f) => `, --${f}`).join('')}.\n`;
    return `Usage: tickd ctl ${synopsis(c)}\n  ${c.summary}\n${own}${formats}`;
  }
  const group = COMMANDS.filter((x) => x.name.startsWith(`${words[0]} `));
  if (group.length > 0 && words.length === 1) return `Commands:\n${commandLines(group)}`;
  throw new UsageError(`no command "${words.join(' ')}" (tickd ctl help lists them)`);
}
