// The interactive prompt (tickd-ctl(1) "INTERACTIVE USE"): `tickd ctl` with no command on a
// terminal. Each line is a command in the same syntax as on the command line, split into words
// by the protocol's own tokenizer (spaces; double quotes group, backslash escapes inside them).
// One connection serves the whole session, opened at the first command and again after it
// breaks. History holds the session's lines (node's readline); Tab completes commands and
// options; Ctrl-C clears the line, or stops a running watch; Ctrl-D or `exit` quits.
import { createInterface, type Completer } from 'node:readline';
import { tokenize } from '../protocol/tokenize.ts';
import { CTL_OPTIONS, scanArgs, type OptionInfo } from './args.ts';
import { COMMANDS, GROUPS } from './command-list.ts';
import { report, runCommand, type Connector, type CtlIo } from './dispatch.ts';
import { UsageError } from './errors.ts';
import { Sink } from './sink.ts';

const OPTIONS = CTL_OPTIONS as Readonly<Record<string, OptionInfo>>;
/** Options that belong to the connection: given once, when the prompt starts. */
const SESSION_OPTIONS = ['addr', 'token', 'token-file', 'tls', 'cacert', 'servername', 'insecure', 'timeout'];
const FIRST_WORDS = [...new Set([...COMMANDS.map((c) => c.name.split(' ')[0]!), 'exit'])];

/** Readline completion: first words, a group's commands, options. */
export const complete: Completer = (line: string) => {
  const words = line.split(' ');
  const cur = words.at(-1) ?? '';
  let candidates: string[];
  if (cur.startsWith('-')) candidates = Object.keys(OPTIONS).filter((n) => !SESSION_OPTIONS.includes(n)).map((n) => `--${n}`);
  else if (words.length === 1) candidates = FIRST_WORDS;
  else if (words.length === 2 && GROUPS.includes(words[0]!)) candidates = COMMANDS.filter((c) => c.name.startsWith(`${words[0]} `)).map((c) => c.name.split(' ')[1]!);
  else candidates = [];
  const hits = candidates.filter((c) => c.startsWith(cur));
  return [hits, cur];
};

export async function runRepl(io: CtlIo, connector: Connector): Promise<number> {
  const terminal = io.stdout.isTTY === true;
  const rl = createInterface({ input: io.stdin, output: io.stdout, terminal, historySize: 1000, completer: complete, prompt: 'tickd> ' });
  let running: AbortController | null = null;
  rl.on('SIGINT', () => {
    if (running !== null) running.abort();
    else {
      rl.write('', { ctrl: true, name: 'u' }); // clear the line, as a shell does
      io.stdout.write('^C\n');
      rl.prompt();
    }
  });
  io.stdout.write('tickd ctl: commands as on the command line ("help" lists them); Ctrl-D quits\n');
  rl.prompt();
  for await (const line of rl) {
    const words = tokenize(line.trim());
    if (words === null) {
      io.stderr.write('tickd ctl: unterminated quote\n');
    } else if (words.length === 1 && (words[0] === 'exit' || words[0] === 'quit')) {
      break;
    } else if (words.length > 0) {
      running = new AbortController();
      try {
        const scanned = scanArgs(words);
        const session = Object.keys(scanned.options).find((k) => SESSION_OPTIONS.includes(k));
        if (session !== undefined) throw new UsageError(`--${session} is given when the prompt starts`);
        const [w0, w1, file] = scanned.positionals;
        if (w0 === 'job' && w1 === 'import' && (file === undefined || file === '-')) throw new UsageError('at the prompt, job import reads a FILE (standard input is the prompt\'s)');
        await runCommand(scanned, { connector, sink: new Sink(io.stdout), io, signal: running.signal });
      } catch (err) {
        report(err, io);
      }
      running = null;
    }
    rl.prompt();
  }
  rl.close();
  return 0;
}
