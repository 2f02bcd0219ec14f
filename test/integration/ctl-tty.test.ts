// `tickd ctl` on a terminal (tickd-ctl(1) OUTPUT, WATCH, "INTERACTIVE USE"): run under
// script(1), which gives it a pseudo-terminal. Statuses are coloured there and not with
// NO_COLOR; with no command it is an interactive prompt; watch redraws in place on the
// alternate screen and leaves it on Ctrl-C with status 0.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Daemon, TICKD } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';
import { addrOf, ctlEnv } from '../helpers/ctl.ts';

const HAS_SCRIPT = spawnSync('script', ['-qec', 'true', '/dev/null']).status === 0;
const PLAIN = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** tickd ctl ARGS on a pseudo-terminal: what it writes, awaited by condition; keys sent to it. */
class Terminal {
  readonly proc: ChildProcess;
  out = '';
  readonly exited: Promise<number | null>;

  constructor(args: readonly string[], env: Record<string, string> = {}) {
    // `exec`: script(1) runs the command under $SHELL -c; dash (SHELL unset, as under CI) stays
    // the parent, and a Ctrl-C would kill it (status 130) whatever tickd ctl does with SIGINT.
    const cmd = 'exec ' + [process.execPath, TICKD, 'ctl', ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    this.proc = spawn('script', ['-qfec', cmd, '/dev/null'], { env: ctlEnv({ TERM: 'xterm', COLUMNS: '120', LINES: '30', ...env }), stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout!.setEncoding('utf8').on('data', (c: string) => { this.out += c; });
    this.proc.stderr!.setEncoding('utf8').on('data', (c: string) => { this.out += c; });
    this.exited = new Promise((resolve) => this.proc.on('close', resolve));
  }

  /** Resolves once the output (escape sequences removed when `plain`) contains `text`. */
  async waitFor(text: string, plain = false, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(plain ? this.out.replace(PLAIN, '') : this.out).includes(text)) {
      if (Date.now() > deadline) throw new Error(`no ${JSON.stringify(text)} on the terminal; got ${JSON.stringify(this.out)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  type(keys: string): void {
    this.proc.stdin!.write(keys);
  }

  close(): void {
    this.proc.stdin!.end();
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}

describe('tickd ctl on a terminal', function () {
  this.timeout(60_000);
  let daemon: Daemon;
  let c: LineClient;
  let addr: string;

  before(async function () {
    if (!HAS_SCRIPT) this.skip();
    daemon = await Daemon.start();
    c = await LineClient.connect(daemon.tcp);
    addr = addrOf(daemon.tcp);
    expect(await c.request('s', 'SET tty.a 1893466800000000000')).to.deep.equal(['s OK']);
  });
  after(async () => {
    c?.close();
    await daemon?.stop();
  });

  it('colours statuses on a terminal, and not when NO_COLOR is set', async () => {
    const coloured = new Terminal(['--addr', addr, 'job', 'ls', 'tty.']);
    expect(await coloured.exited).to.equal(0);
    expect(coloured.out).to.include('tty.a  \x1b[36mplanned\x1b[0m  2030-01-01T03:00:00.000000000Z');
    const plain = new Terminal(['--addr', addr, 'job', 'ls', 'tty.'], { NO_COLOR: '1' });
    expect(await plain.exited).to.equal(0);
    expect(plain.out).to.include('tty.a  planned  2030-01-01T03:00:00.000000000Z');
    expect(plain.out).to.not.include('\x1b[36m');
  });

  it('with no command: a prompt that runs commands on one connection, keeps going after errors, quits on exit', async () => {
    const t = new Terminal(['--addr', addr]);
    try {
      await t.waitFor('tickd> ');
      t.type('job set tty.repl "2030-01-01 03:00:00"\r');
      await t.waitFor('tty.repl  planned  2030-01-01T03:00:00.000000000Z', true);
      t.type('help\r');
      await t.waitFor('job import [FILE]');
      t.type('job get no.such\r');
      await t.waitFor('tickd ctl: not_found: job "no.such" does not exist');
      t.type('bogus\r');
      await t.waitFor('tickd ctl: no command "bogus"');
      t.type('stat --addr 1.2.3.4:5\r');
      await t.waitFor('tickd ctl: --addr is given when the prompt starts');
      t.type('job import\r');
      await t.waitFor('tickd ctl: at the prompt, job import reads a FILE');
      t.type('job ls tty. --json\r');
      await t.waitFor('{"id":"tty.repl","status":"planned","execution":1893466800000000000}');
      t.type('exit\r');
      expect(await t.exited).to.equal(0);
    } finally {
      t.close();
    }
    expect((await c.request('g', 'GET tty.repl'))[0]).to.equal('g OK planned 1893466800000000000');
  });

  it('the prompt\'s history recalls the previous line (arrow up)', async () => {
    const t = new Terminal(['--addr', addr]);
    try {
      await t.waitFor('tickd> ');
      t.type('job get tty.a --raw\r');
      await t.waitFor('OK planned 1893466800000000000');
      const before = t.out.split('OK planned 1893466800000000000').length;
      t.type('\x1b[A\r');
      await t.waitFor('OK planned');
      for (let i = 0; i < 300 && t.out.split('OK planned 1893466800000000000').length === before; i++) await new Promise((r) => setTimeout(r, 20));
      expect(t.out.split('OK planned 1893466800000000000').length).to.equal(before + 1);
      t.type('\x04'); // Ctrl-D
      expect(await t.exited).to.equal(0);
    } finally {
      t.close();
    }
  });

  it('watch redraws in place on the alternate screen; Ctrl-C restores the screen and exits 0', async () => {
    const t = new Terminal(['--addr', addr, 'watch', 'tty.', '--interval', '100ms']);
    try {
      await t.waitFor('\x1b[?1049h');
      await t.waitFor(`tickd ctl watch ${addr}  prefix "tty."`);
      await t.waitFor('rates per s (net): executed', true);
      expect(t.out).to.include('\x1b[H');
      t.type('\x03'); // Ctrl-C: SIGINT to the foreground process
      expect(await t.exited).to.equal(0);
      expect(t.out, JSON.stringify(t.out.slice(-400))).to.include('\x1b[?1049l');
    } finally {
      t.close();
    }
  });
});
