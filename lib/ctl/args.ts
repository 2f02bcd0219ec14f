// The command line of `tickd ctl` (tickd-ctl(1) SYNOPSIS, OPTIONS): the option table and the
// scanner that splits argv into options and positional words. Pure.
//
// Rules:
// - Options may come before, between or after the command's words: `--name VALUE`,
//   `--name=VALUE`, `-h`. `--` ends the options. A word that starts with `-` and a digit
//   (`-1000`, a negative nanosecond time) is a positional word, as is `-` alone.
// - After `rule set ID PATTERN [OPTION=VALUE...] RUNNER` every word is literal (command-list.ts
//   literalAfter, keyValuesFrom), so runner arguments such as awf's `--input k=v` or a direct
//   runner's `-n` need no `--`.
// - Unknown options, a missing value, or a value given to a switch are usage errors (exit 2).
// - The token is never echoed in a message: only option names are.
import { findCommand, type CommandInfo } from './command-list.ts';
import { UsageError } from './errors.ts';

export interface OptionInfo {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** The environment variable read when the option is absent. */
  readonly env?: string;
  /** The value's name in help and the man page. */
  readonly value?: string;
  readonly help: string;
  /** Command options belong to some commands only (command-list.ts `options`). */
  readonly command?: true;
}

export const CTL_OPTIONS = {
  addr: { type: 'string', env: 'TICKD_ADDR', value: 'HOST:PORT[,HOST:PORT...]', help: 'daemon address (default 127.0.0.1:5678); several are tried in order' },
  token: { type: 'string', value: 'SECRET', help: 'authenticate with this secret (shown by ps: prefer --token-file or TICKD_TOKEN)' },
  'token-file': { type: 'string', env: 'TICKD_TOKEN_FILE', value: 'FILE', help: 'read the secret from the first line of FILE' },
  tls: { type: 'boolean', env: 'TICKD_TLS', help: 'connect with TLS (implied by --cacert, --servername, --insecure)' },
  cacert: { type: 'string', env: 'TICKD_CACERT', value: 'FILE', help: 'trust the CA certificates of this PEM file' },
  servername: { type: 'string', env: 'TICKD_SERVERNAME', value: 'NAME', help: 'name the certificate must carry (and SNI)' },
  insecure: { type: 'boolean', env: 'TICKD_INSECURE', help: 'accept any certificate (testing only)' },
  timeout: { type: 'string', env: 'TICKD_TIMEOUT', value: 'DURATION', help: 'limit for connecting and for each wait for an answer (default 10s)' },
  json: { type: 'boolean', help: 'print one JSON document (JSON lines for export and watch)' },
  raw: { type: 'boolean', help: 'print the protocol lines, request id removed' },
  all: { type: 'boolean', command: true, help: 'job export: executed and failed jobs too' },
  interval: { type: 'string', command: true, value: 'DURATION', help: 'watch: time between polls (default 1s)' },
  help: { type: 'boolean', short: 'h', help: 'print the help' },
} as const satisfies Record<string, OptionInfo>;

export type OptionName = keyof typeof CTL_OPTIONS;
export type OptionValues = Partial<Record<OptionName, string | true>>;

export interface ScannedArgs {
  readonly options: OptionValues;
  readonly positionals: readonly string[];
}

const OPTIONS: Readonly<Record<string, OptionInfo>> = CTL_OPTIONS;
const SHORT = new Map(Object.entries(OPTIONS).filter(([, o]) => o.short !== undefined).map(([n, o]) => [o.short!, n as OptionName]));

function isOptionWord(word: string): boolean {
  return word.startsWith('-') && word !== '-' && !/^-\d/.test(word);
}

export function scanArgs(argv: readonly string[]): ScannedArgs {
  const options: OptionValues = {};
  const positionals: string[] = [];
  let literal = false;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (literal || !isOptionWord(word)) {
      positionals.push(word);
      if (!literal) {
        const c = findCommand(positionals);
        literal = c?.literalAfter !== undefined && countedArgs(c, positionals) === c.literalAfter;
      }
      continue;
    }
    if (word === '--') {
      literal = true;
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      name = eq === -1 ? word.slice(2) : word.slice(2, eq);
      inline = eq === -1 ? undefined : word.slice(eq + 1);
    } else {
      const long = word.length === 2 ? SHORT.get(word[1]!) : undefined;
      if (long === undefined) throw new UsageError(`unknown option ${quoteWord(word)}`);
      name = long;
    }
    const info = OPTIONS[name];
    if (info === undefined || !Object.hasOwn(OPTIONS, name)) throw new UsageError(`unknown option --${quoteWord(name)}`);
    const key = name as OptionName;
    if (info.type === 'boolean') {
      if (inline !== undefined) throw new UsageError(`option --${name} takes no value`);
      options[key] = true;
    } else if (inline !== undefined) {
      options[key] = inline;
    } else {
      if (i + 1 >= argv.length) throw new UsageError(`option --${name} needs a value${info.value === undefined ? '' : ` (${info.value})`}`);
      options[key] = argv[++i]!;
    }
  }
  return { options, positionals };
}

/** A command's arguments so far, as literalAfter counts them: not the key=value words from keyValuesFrom on. */
function countedArgs(c: CommandInfo, positionals: readonly string[]): number {
  const args = positionals.slice(c.name.split(' ').length);
  const from = c.keyValuesFrom ?? args.length;
  return args.filter((w, i) => i < from || !w.includes('=')).length;
}

/** A user's word inside a message: short, control characters visible. */
export function quoteWord(s: string): string {
  const cut = s.length > 40 ? `${s.slice(0, 40)}...` : s;
  return cut.replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
