// Runs `tickd ctl` as a user would: the real bin/tickd in a child process, with its own
// environment (no TICKD_* inherited from the test runner), optional stdin, and its exit status,
// stdout and stderr; or started in the background (watch, a held-open import) with its output
// lines awaited by condition.
import { spawn, type ChildProcess } from 'node:child_process';
import { TICKD, type Address } from './daemon.ts';

export interface CtlResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CtlRunOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly stdin?: string | Buffer;
  readonly timeoutMs?: number;
}

const running = new Set<ChildProcess>();
process.on('exit', () => { for (const p of running) p.kill('SIGKILL'); });

/** The runner's environment without TICKD_* and NO_COLOR, plus `extra`. */
export function ctlEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TICKD_') && k !== 'NO_COLOR') env[k] = v;
  return { ...env, ...extra };
}

export const addrOf = (a: Address): string => `${a.host}:${a.port}`;

export function spawnCtl(args: readonly string[], opts: CtlRunOptions = {}): ChildProcess {
  const proc = spawn(process.execPath, [TICKD, 'ctl', ...args], { env: ctlEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(proc);
  proc.on('exit', () => running.delete(proc));
  return proc;
}

/** Runs `tickd ctl ARGS` to completion. */
export function ctl(args: readonly string[], opts: CtlRunOptions = {}): Promise<CtlResult> {
  return new Promise((resolve, reject) => {
    const proc = spawnCtl(args, opts);
    let stdout = '';
    let stderr = '';
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
    proc.stderr!.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`tickd ctl ${args.join(' ')} did not exit; stderr: ${stderr}`)); }, opts.timeoutMs ?? 20_000);
    proc.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    proc.stdin!.on('error', () => {});
    proc.stdin!.end(opts.stdin ?? '');
  });
}

/** A ctl process left running: its output lines as they come, awaited by condition. */
export class BackgroundCtl {
  readonly proc: ChildProcess;
  readonly lines: string[] = [];
  stderr = '';
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<number | null>;

  constructor(args: readonly string[], opts: CtlRunOptions = {}) {
    this.proc = spawnCtl(args, opts);
    let buf = '';
    this.proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
      buf += c;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        this.lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
      for (const w of this.waiters) w();
    });
    this.proc.stderr!.setEncoding('utf8').on('data', (c: string) => { this.stderr += c; for (const w of this.waiters) w(); });
    this.exited = new Promise((resolve) => this.proc.on('close', (code) => { for (const w of this.waiters) w(); resolve(code); }));
  }

  /** Resolves with the first output line (seen already or to come) for which `match` holds. */
  waitForLine(match: (line: string) => boolean, timeoutMs = 15_000, what = 'line'): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.lines.find(match);
        if (found === undefined) return false;
        resolve(found);
        return true;
      };
      if (check()) return;
      const timer = setTimeout(() => { this.waiters.delete(onChange); reject(new Error(`no ${what} in ${timeoutMs} ms; stdout:\n${this.lines.join('\n')}\nstderr:\n${this.stderr}`)); }, timeoutMs);
      const onChange = () => { if (check()) { clearTimeout(timer); this.waiters.delete(onChange); } };
      this.waiters.add(onChange);
    });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
  }
}
