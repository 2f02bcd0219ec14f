// The commands of tickd ctl before they connect (lib/ctl/commands.ts, command-list.ts, help.ts,
// completion.ts): every listed command has an implementation, arguments are checked with the
// daemon's own rules and refused as usage errors, help and completion follow the tables.
import { expect } from 'chai';
import { COMMANDS, findCommand } from '../../../lib/ctl/command-list.ts';
import { PREPARE } from '../../../lib/ctl/commands.ts';
import { CTL_OPTIONS } from '../../../lib/ctl/args.ts';
import { UsageError } from '../../../lib/ctl/errors.ts';
import { helpFor, usage } from '../../../lib/ctl/help.ts';
import { completionScript } from '../../../lib/ctl/completion.ts';
import { complete } from '../../../lib/ctl/repl.ts';

const input = { nowNs: 1_775_822_400_000_000_000n, options: {} };

function refused(name: keyof typeof PREPARE, args: string[]): string {
  try {
    PREPARE[name](args, input);
  } catch (err) {
    expect(err).to.be.instanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${name} ${args.join(' ')} was accepted`);
}

describe('ctl/commands', () => {
  it('has one implementation per listed command and finds commands by their words', () => {
    expect(Object.keys(PREPARE).sort()).to.deep.equal(COMMANDS.map((c) => c.name).sort());
    expect(findCommand(['job', 'set', 'x'])?.name).to.equal('job set');
    expect(findCommand(['stat'])?.name).to.equal('stat');
    expect(findCommand(['job'])).to.equal(null);
    expect(findCommand(['jobs', 'ls'])).to.equal(null);
  });

  it('checks identifiers, prefixes and WHEN before connecting', () => {
    expect(PREPARE['job set'](['a.1', '+5m'], input)).to.be.a('function');
    expect(refused('job set', ['a/1', 'now'])).to.match(/job identifier contains invalid character '\/'/);
    expect(refused('job set', ['a.1', 'later'])).to.match(/^invalid WHEN "later"/);
    expect(refused('job get', [''])).to.equal('job identifier must not be empty');
    expect(refused('job retry', ['a b'])).to.match(/^job identifier contains invalid character space/);
    expect(refused('job ls', ['a b'])).to.match(/^prefix contains invalid character space/);
    expect(refused('job rm', ['ok', 'no way'])).to.match(/invalid character space/);
    expect(refused('rule rm', ['r!'])).to.match(/^rule identifier contains invalid character '!'/);
  });

  it('checks a rule as the daemon does, quoting is ctl\'s job', () => {
    expect(PREPARE['rule set'](['r', 'a.', 'shell', 'echo "hi" there'], input)).to.be.a('function');
    expect(refused('rule set', ['r', 'a.', 'shell', 'echo', 'hi'])).to.equal('shell runner takes exactly one command argument (quote the command)');
    expect(refused('rule set', ['r', 'a.', 'http', 'GET', 'ftp://x'])).to.match(/url/);
    expect(refused('rule set', ['r', 'a.', 'redis', 'redis://h', 'DEL', 'k'])).to.match(/redis command "DEL"/);
    expect(refused('rule set', ['r', 'a.', 'telnet', 'x'])).to.match(/unknown runner type "telnet"/);
    expect(refused('rule set', ['r', 'a b', 'shell', 'x'])).to.match(/^pattern contains invalid character space/);
    expect(refused('rule set', ['r', 'a.', 'shell', 'x\ny'])).to.match(/^shell command must not contain NUL/);
    expect(refused('rule set', ['r', 'a.', 'shell', 'x'.repeat(4090)])).to.match(/protocol line of \d+ bytes; the daemon takes at most 4096/);
  });

  it('takes rule options between the pattern and the runner, refused as the daemon refuses them', () => {
    expect(PREPARE['rule set'](['r', 'a.', 'retry.attempts=3', 'retry.delay=1s', 'concurrency=2', 'shell', 'exit 1'], input)).to.be.a('function');
    expect(refused('rule set', ['r', 'a.', 'retry.attempts=3', 'shell', 'x'])).to.equal('retry.delay: is required when attempts is more than 1');
    expect(refused('rule set', ['r', 'a.', 'concurrency=0', 'shell', 'x'])).to.equal('concurrency: must be an integer from 1 to 100000');
    expect(refused('rule set', ['r', 'a.', 'colour=red', 'shell', 'x'])).to.match(/^colour: unknown option \(known: retry\.attempts, /);
    expect(refused('rule set', ['r', 'a.', 'concurrency=2', 'rate.limit=1'])).to.equal('rate.per: is required with rate.limit');
    expect(refused('rule set', ['r', 'a.', 'concurrency=2', 'rate.per=1s', 'shell'])).to.equal('rate.limit: is required with rate.per');
  });

  it('help lists every command and option; help COMMAND describes one', () => {
    const text = usage();
    for (const c of COMMANDS) expect(text).to.include(c.name);
    for (const o of Object.keys(CTL_OPTIONS)) expect(text).to.include(`--${o}`);
    expect(helpFor(['job', 'export'])).to.match(/^Usage: tickd ctl job export \[PREFIX\]\n.*\n {2}--all/);
    expect(helpFor(['rule'])).to.match(/rule set ID PATTERN \[OPTION=VALUE\.\.\.\] RUNNER ARGS\.\.\./);
    expect(() => helpFor(['nope'])).to.throw(UsageError, /no command "nope"/);
  });

  it('completion scripts name every command word and option', () => {
    for (const shell of ['bash', 'zsh']) {
      const text = completionScript(shell);
      for (const c of COMMANDS) for (const w of c.name.split(' ')) expect(text, `${shell}: ${w}`).to.match(new RegExp(`\\b${w}\\b`));
      for (const o of Object.keys(CTL_OPTIONS)) expect(text, `${shell}: --${o}`).to.include(`--${o}`);
    }
    expect(() => completionScript('fish')).to.throw(UsageError, /bash or zsh/);
  });

  it('job retry completes job identifiers, one argument as job get', () => {
    for (const shell of ['bash', 'zsh']) {
      expect(completionScript(shell), shell).to.include("'job retry'|'job retry '*) cmd='tickd ctl --timeout 1s job export --all");
    }
    expect(findCommand(['job', 'retry', 'a'])).to.include({ name: 'job retry', min: 1, max: 1 });
  });

  it('the prompt completes first words, a group\'s commands and options', () => {
    expect(complete('jo')).to.deep.equal([['job'], 'jo']);
    expect(complete('job ')).to.deep.equal([['set', 'get', 'ls', 'rm', 'retry', 'import', 'export'], '']);
    expect(complete('job ls --js')).to.deep.equal([['--json'], '--js']);
    expect((complete('stat --') as [string[], string])[0]).to.not.include('--token');
  });
});
