// `tickd ctl completion bash|zsh` (tickd-ctl(1) COMPLETION): shell functions completing
// `tickd ctl`'s commands, options and, for the commands that take them, files and the
// identifiers the daemon has (asked with `tickd ctl job export --all` and `rule ls --raw`, with
// the connection the environment gives, one second at most). Written from the command and
// option tables, so a new command completes without an edit here.
import { CTL_OPTIONS, type OptionInfo } from './args.ts';
import { COMMANDS, GROUPS } from './command-list.ts';
import { UsageError } from './errors.ts';

const OPTIONS = CTL_OPTIONS as Readonly<Record<string, OptionInfo>>;
const FILE_OPTIONS = ['token-file', 'cacert'];
const VALUE_OPTIONS = Object.keys(OPTIONS).filter((n) => OPTIONS[n]!.type === 'string');
const ALL_OPTIONS = Object.keys(OPTIONS).map((n) => `--${n}`).join(' ');
/** What tickd itself offers before `ctl`. */
const TOP_WORDS = 'ctl dump import --config --check --workers --pidfile --help --version';

const JOB_IDS = 'tickd ctl --timeout 1s job export --all "$cur" 2>/dev/null | cut -d" " -f1';
const RULE_IDS = 'tickd ctl --timeout 1s rule ls --raw "$cur" 2>/dev/null | sed "\\$d" | cut -d" " -f1';

/** The word list (or command) completing the arguments of a command. */
function argumentSource(name: string): { words?: string; command?: string; files?: true } | null {
  switch (name) {
    case 'job get': case 'job rm': case 'job ls': case 'job export': case 'watch': return { command: JOB_IDS };
    case 'rule rm': case 'rule ls': return { command: RULE_IDS };
    case 'job import': return { files: true };
    case 'completion': return { words: 'bash zsh' };
    case 'help': return { words: [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]!))].join(' ') };
    default: return null;
  }
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
    const src = argumentSource(c.name);
    if (src === null) continue;
    const action = src.files === true ? 'files=1' : src.words !== undefined ? `list='${src.words}'` : `cmd='${src.command!.replace(/'/g, "'\\''")}'`;
    lines.push(`    '${c.name}'|'${c.name} '*) ${action} ;;`);
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
  local cur prev w i skip=0 inctl=0 list='' cmd='' files=0
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
  else COMPREPLY=($(compgen -W "$list" -- "$cur")); fi
}
complete -F _tickd tickd
`;
}

function zsh(): string {
  return `#compdef tickd
# zsh completion for tickd ctl: save it as _tickd in a directory of $fpath, or
# source <(tickd ctl completion zsh) after compinit.
_tickd() {
  local cur w i skip=0 inctl=0 list='' cmd='' files=0
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
