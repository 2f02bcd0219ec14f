// The argument scanner and the settings of tickd ctl (lib/ctl/args.ts, settings.ts): options
// anywhere, literal runner words, usage errors, env fallbacks, tokens from env and file, TLS.
import { expect } from 'chai';
import { scanArgs } from '../../../lib/ctl/args.ts';
import { UsageError } from '../../../lib/ctl/errors.ts';
import { connectSettings, intervalMs, outputFormat, parseEndpoint, useColor } from '../../../lib/ctl/settings.ts';

const noFile = (p: string): Buffer => { throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' }); };

function usage(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).to.be.instanceOf(UsageError);
    expect((err as UsageError).exit).to.equal(2);
    return (err as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('ctl/args', () => {
  it('takes options before, between and after the command words', () => {
    const s = scanArgs(['--addr', 'h:1', 'job', '--json', 'ls', 'a.', '--timeout=3s']);
    expect(s.positionals).to.deep.equal(['job', 'ls', 'a.']);
    expect(s.options).to.deep.equal({ addr: 'h:1', json: true, timeout: '3s' });
  });

  it('reads -h, --, a negative number and - as words', () => {
    expect(scanArgs(['-h']).options).to.deep.equal({ help: true });
    expect(scanArgs(['job', 'set', 'x', '-1000']).positionals).to.deep.equal(['job', 'set', 'x', '-1000']);
    expect(scanArgs(['job', 'import', '-']).positionals).to.deep.equal(['job', 'import', '-']);
    expect(scanArgs(['job', 'ls', '--', '--json']).positionals).to.deep.equal(['job', 'ls', '--json']);
  });

  it('takes rule set runner arguments literally, options before them still count', () => {
    const s = scanArgs(['--json', 'rule', 'set', 'r', 'a.', 'awf', 'wf', '--input', 'k=v', '--json']);
    expect(s.positionals).to.deep.equal(['rule', 'set', 'r', 'a.', 'awf', 'wf', '--input', 'k=v', '--json']);
    expect(s.options).to.deep.equal({ json: true });
    expect(scanArgs(['rule', 'set', 'r', 'a.', 'direct', '/bin/echo', '-n', 'hi']).positionals.slice(-3)).to.deep.equal(['/bin/echo', '-n', 'hi']);
  });

  it('rule set: the literal words start at the runner, after the rule options', () => {
    const s = scanArgs(['rule', 'set', 'r', 'a.', 'retry.attempts=3', '--json', 'concurrency=2', 'direct', '/bin/echo', '--raw']);
    expect(s.options).to.deep.equal({ json: true });
    expect(s.positionals.slice(4)).to.deep.equal(['retry.attempts=3', 'concurrency=2', 'direct', '/bin/echo', '--raw']);
    // Before the pattern a word with `=` counts as any other (it is a bad identifier, refused later).
    expect(scanArgs(['rule', 'set', 'a=b', 'c=d', 'shell', '--json']).positionals).to.deep.equal(['rule', 'set', 'a=b', 'c=d', 'shell', '--json']);
  });

  it('rejects unknown options, missing values and values for switches, never echoing a value', () => {
    expect(usage(() => scanArgs(['--bogus']))).to.equal('unknown option --bogus');
    expect(usage(() => scanArgs(['-x']))).to.equal('unknown option -x');
    expect(usage(() => scanArgs(['--tokn=hunter2']))).to.equal('unknown option --tokn');
    expect(usage(() => scanArgs(['stat', '--addr']))).to.match(/--addr needs a value/);
    expect(usage(() => scanArgs(['--json=yes']))).to.equal('option --json takes no value');
  });
});

describe('ctl/settings', () => {
  it('parses addresses: host:port, [v6]:port, host alone, several in order', () => {
    expect(parseEndpoint('127.0.0.1:5679')).to.deep.include({ host: '127.0.0.1', port: 5679 });
    expect(parseEndpoint('[::1]:7')).to.deep.include({ host: '::1', port: 7 });
    expect(parseEndpoint('db.example')).to.deep.include({ host: 'db.example', port: 5678 });
    expect(parseEndpoint('h:0')).to.match(/port must be 1 to 65535/);
    expect(parseEndpoint('h:p')).to.match(/is not HOST:PORT/);
    const s = connectSettings({ addr: 'a:1,b:2' }, {}, noFile);
    expect(s.endpoints.map((e) => e.text)).to.deep.equal(['a:1', 'b:2']);
  });

  it('defaults: 127.0.0.1:5678, no TLS, no token, 10 s', () => {
    const s = connectSettings({}, {}, noFile);
    expect(s).to.deep.include({ tls: null, token: null, timeoutMs: 10_000 });
    expect(s.endpoints).to.deep.equal([{ host: '127.0.0.1', port: 5678, text: '127.0.0.1:5678' }]);
  });

  it('falls back to the environment; an option wins over it', () => {
    const env = { TICKD_ADDR: 'e:1', TICKD_TIMEOUT: '2s', TICKD_TLS: '1', TICKD_SERVERNAME: 'srv' };
    const s = connectSettings({}, env, noFile);
    expect(s.endpoints[0]!.text).to.equal('e:1');
    expect(s.timeoutMs).to.equal(2000);
    expect(s.tls).to.deep.equal({ ca: null, servername: 'srv', insecure: false });
    expect(connectSettings({ addr: 'o:2', timeout: '1s' }, env, noFile)).to.deep.include({ timeoutMs: 1000 });
    expect(connectSettings({ addr: 'o:2' }, env, noFile).endpoints[0]!.text).to.equal('o:2');
  });

  it('--cacert, --servername and --insecure imply TLS; the CA file is read', () => {
    const read = (p: string) => Buffer.from(`pem of ${p}`);
    expect(connectSettings({ cacert: 'ca.pem' }, {}, read).tls).to.deep.equal({ ca: Buffer.from('pem of ca.pem'), servername: null, insecure: false });
    expect(connectSettings({ insecure: true }, {}, read).tls).to.deep.equal({ ca: null, servername: null, insecure: true });
    expect(usage(() => connectSettings({ cacert: 'nope.pem' }, {}, noFile))).to.match(/cannot read the CA file nope\.pem: ENOENT/);
    expect(usage(() => connectSettings({}, { TICKD_TLS: 'maybe' }, noFile))).to.equal('TICKD_TLS must be 1 or 0, got "maybe"');
  });

  it('takes the token from --token, --token-file, TICKD_TOKEN, TICKD_TOKEN_FILE, in that order', () => {
    const read = (p: string) => Buffer.from(p === 'tok' ? 'from-file\n' : 'from-env-file\r\n');
    expect(connectSettings({ token: 'flag' }, { TICKD_TOKEN: 'env' }, read).token).to.equal('flag');
    expect(connectSettings({ 'token-file': 'tok' }, { TICKD_TOKEN: 'env' }, read).token).to.equal('from-file');
    expect(connectSettings({}, { TICKD_TOKEN: 'env', TICKD_TOKEN_FILE: 'x' }, read).token).to.equal('env');
    expect(connectSettings({}, { TICKD_TOKEN_FILE: 'x' }, read).token).to.equal('from-env-file');
  });

  it('bad tokens are usage errors whose message never holds the secret', () => {
    expect(usage(() => connectSettings({ token: 'a', 'token-file': 'f' }, {}, noFile))).to.equal('give --token or --token-file, not both');
    const m1 = usage(() => connectSettings({ 'token-file': 'missing' }, {}, noFile));
    expect(m1).to.equal('cannot read the token file missing (--token-file): ENOENT');
    expect(usage(() => connectSettings({ 'token-file': 'e' }, {}, () => Buffer.from('\n')))).to.match(/is empty/);
    const m2 = usage(() => connectSettings({}, { TICKD_TOKEN: 'sec\nret' }, noFile));
    expect(m2).to.equal('the token given by TICKD_TOKEN holds a NUL, CR or LF');
    expect(m2).to.not.include('sec');
  });

  it('output: table by default, --json or --raw, not both; colour only on a terminal without NO_COLOR', () => {
    expect(outputFormat({})).to.equal('table');
    expect(outputFormat({ json: true })).to.equal('json');
    expect(outputFormat({ raw: true })).to.equal('raw');
    expect(usage(() => outputFormat({ json: true, raw: true }))).to.match(/not both/);
    expect(useColor(true, {})).to.equal(true);
    expect(useColor(true, { NO_COLOR: '1' })).to.equal(false);
    expect(useColor(true, { NO_COLOR: '' })).to.equal(true);
    expect(useColor(false, {})).to.equal(false);
    expect(useColor(undefined, {})).to.equal(false);
  });

  it('--interval: 1 s by default, 50 ms at least', () => {
    expect(intervalMs({})).to.equal(1000);
    expect(intervalMs({ interval: '200ms' })).to.equal(200);
    expect(usage(() => intervalMs({ interval: '10ms' }))).to.match(/out of range/);
  });
});
