// `tickd ctl completion bash|zsh` (tickd-ctl(1) COMPLETION): shell functions completing
// `tickd ctl`'s commands, options and, for the commands that take them, files and the
// identifiers the daemon has (asked with `tickd ctl job export --all`, `rule ls --raw` and
// `sched ls --raw`, with the connection the environment gives, one second at most), and the
// KEY= names of `sched set`. Written from the command and option tables, so a new command
// completes without an edit here.
import { CTL_OPTIONS, type OptionInfo } from './args.ts';
import { COMMANDS, GROUPS } from './command-list.ts';
import { UsageError } from './errors.ts';
import { FIELDS } from '../schedule/spec.ts';

const OPTIONS = CTL_OPTIONS as Readonly<Record<string, OptionInfo>>;
const FILE_OPTIONS = ['token-file', 'cacert'];
const VALUE_OPTIONS = Object.keys(OPTIONS).filter((n) => OPTIONS[n]!.type === 'string');
const ALL_OPTIONS = Object.keys(OPTIONS).map((n) => `--${n}`).join(' ');
/** What tickd itself offers before `ctl`. */
const TOP_WORDS = 'ctl dump import --config --check --workers --pidfile --help --version';

const JOB_IDS = 'tickd ctl --timeout 1s job export --all "$cur" 2>/dev/null | cut -d" " -f1';
const RULE_IDS = 'tickd ctl --timeout 1s rule ls --raw "$cur" 2>/dev/null | sed "\\$d" | cut -d" " -f1';
const SCHED_IDS = 'tickd ctl --timeout 1s sched ls --raw "$cur" 2>/dev/null | sed "\\$d" | cut -d" " -f1';

/** How an argument completes: from a word list, a command's output, or file names. */
interface Source {
  readonly words?: string;
  readonly command?: string;
  readonly files?: true;
  /** No space after the word: `sched set`'s `KEY=` names, which the value follows. */
  readonly nospace?: true;
}

const SCHED_KEYS: Source = { words: FIELDS.map((f) => `${f}=`).join(' '), nospace: true };

/** What completes the first argument of a command, and the ones after it (null: nothing). */
function argumentSource(name: string): { first: Source | null; rest: Source | null } {
  const same = (src: Source): { first: Source; rest: Source } => ({ first: src, rest: src });
  switch (name) {
    case 'job get': case 'job rm': case 'job retry': case 'job ls': case 'job export': case 'watch': return same({ command: JOB_IDS });
    case 'rule rm': case 'rule ls': return same({ command: RULE_IDS });
    case 'sched get': case 'sched rm': case 'sched ls': case 'sched pause': case 'sched resume': case 'sched run': return same({ command: SCHED_IDS });
    case 'sched next': case 'sched history': return { first: { command: SCHED_IDS }, rest: null };
    case 'sched set': return { first: { command: SCHED_IDS }, rest: SCHED_KEYS };
    case 'job import': return same({ files: true });
    case 'completion': return same({ words: 'bash zsh' });
    case 'help': return same({ words: [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]!))].join(' ') });
    default: return { first: null, rest: null };
  }
}

function action(src: Source): string {
  if (src.files === true) return 'files=1';
  if (src.words !== undefined) return `list='${src.words}'${src.nospace === true ? '; nospace=1' : ''}`;
  return `cmd='${src.command!.replace(/'/g, "'\\''")}'`;
}

function firstWords(): string {
  return [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]!))].join(' ');
}

/** `case` arms shared by both shells: set `list` (words), `cmd` (a command printing words) or `files`. */
function arms(): string {
  const lines: string[] = [`    '') list='${firstWords()}' ;;`];
  for (const g of GROUPS) {
    const subs = COMMANDS.filter((c) => c.name.startsWith(`${g} `)).map((c) => c.name.slice(g.length + 1)).join(' ');
    lines.push(`    '${g}') list='${subs}' ;;`);
  }
  for (const c of COMMANDS) {
    const { first, rest } = argumentSource(c.name);
    if (first !== null && first === rest) {
      lines.push(`    '${c.name}'|'${c.name} '*) ${action(first)} ;;`);
      continue;
    }
    if (first !== null) lines.push(`    '${c.name}') ${action(first)} ;;`);
    if (rest !== null) lines.push(`    '${c.name} '*) ${action(rest)} ;;`);
  }
  return lines.join('\n');
}

/**
 * The shell loop both completions share (bash and zsh write it alike): the words before the
 * cursor, options and their values skipped, into `args` once `ctl` was seen.
 */
function wordsBeforeCursor(first: string, cursor: string, words: string): string {
  return `  for ((i = ${first}; i < ${cursor}; i++)); do
    w="\${${words}[i]}"
    if ((skip)); then skip=0; continue; fi
    case "$w" in
      ${VALUE_OPTIONS.map((o) => `--${o}`).join('|')}) skip=1; continue ;;
      -*) continue ;;
    esac
    if ((!inctl)); then
      [[ $w == ctl ]] && inctl=1 && continue
      return
    fi
    args+=("$w")
  done`;
}

function bash(): string {
  return `# bash completion for tickd ctl: eval "$(tickd ctl completion bash)", or save it as
# /etc/bash_completion.d/tickd.
_tickd() {
  local cur prev w i skip=0 inctl=0 list='' cmd='' files=0 nospace=0
  local -a args=()
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
    ${FILE_OPTIONS.map((o) => `--${o}`).join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    ${VALUE_OPTIONS.filter((o) => !FILE_OPTIONS.includes(o)).map((o) => `--${o}`).join('|')}) COMPREPLY=(); return ;;
  esac
${wordsBeforeCursor('1', 'COMP_CWORD', 'COMP_WORDS')}
  if ((!inctl)); then COMPREPLY=($(compgen -W "${TOP_WORDS}" -- "$cur")); return; fi
  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "${ALL_OPTIONS}" -- "$cur")); return; fi
  case "\${args[*]}" in
${arms()}
  esac
  if ((files)); then COMPREPLY=($(compgen -f -- "$cur"));
  elif [[ -n $cmd ]]; then COMPREPLY=($(compgen -W "$(eval "$cmd")" -- "$cur"));
  else
    COMPREPLY=($(compgen -W "$list" -- "$cur"))
    if ((nospace)); then compopt -o nospace 2>/dev/null; fi
  fi
}
complete -F _tickd tickd
`;
}

function zsh(): string {
  return `#compdef tickd
# zsh completion for tickd ctl: save it as _tickd in a directory of $fpath, or
# source <(tickd ctl completion zsh) after compinit.
_tickd() {
  local cur w i skip=0 inctl=0 list='' cmd='' files=0 nospace=0
  local -a args
  cur="\${words[CURRENT]}"
  case "\${words[CURRENT-1]}" in
    ${FILE_OPTIONS.map((o) => `--${o}`).join('|')}) _files; return ;;
    ${VALUE_OPTIONS.filter((o) => !FILE_OPTIONS.includes(o)).map((o) => `--${o}`).join('|')}) return ;;
  esac
${wordsBeforeCursor('2', 'CURRENT', 'words')}
  if ((!inctl)); then compadd -- ${TOP_WORDS}; return; fi
  if [[ $cur == -* ]]; then compadd -- ${ALL_OPTIONS}; return; fi
  case "\${args[*]}" in
${arms()}
  esac
  if ((files)); then _files
  elif [[ -n $cmd ]]; then compadd -- \${(f)"$(eval "$cmd")"}
  elif ((nospace)); then compadd -S '' -- \${=list}
  else compadd -- \${=list}; fi
}
if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then _tickd "$@"; else compdef _tickd tickd; fi
`;
}

export function completionScript(shell: string): string {
  if (shell === 'bash') return bash();
  if (shell === 'zsh') return zsh();
  throw new UsageError(`completion for "${shell}" is not available (bash or zsh)`);
}
