// Starts the real bin/tickd on ephemeral ports with a temp config and waits for its "ready"
// log line (which carries the bound addresses): no fixed ports, no sleeps.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'smol-toml';
import { tempDir } from './tmp.ts';

export const TICKD = fileURLToPath(new URL('../../bin/tickd', import.meta.url));

export type ConfigTree = Record<string, Record<string, unknown>>;

export interface DaemonOptions {
  /** Sections merged over the test defaults (port 0, memory persistence, info logging). */
  readonly config?: ConfigTree;
  /** Reuse a directory (restart tests); a new temp dir otherwise. */
  readonly dir?: string;
  /** Run bin/tickd as a program (its #! line, as an init system does), not by this test's Node. */
  readonly asProgram?: boolean;
  /** --workers (default 1); null: none given, the daemon's own default. */
  readonly workers?: number | null;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Name the config file in TICKD_CONFIG instead of with -c. */
  readonly configInEnv?: boolean;
  readonly readyTimeoutMs?: number;
  /** Start under this open-file limit (`ulimit -n`), to provoke EMFILE. */
  readonly nofile?: number;
}

export interface Address {
  readonly host: string;
  readonly port: number;
}

const running = new Set<ChildProcess>();
process.on('exit', () => { for (const p of running) p.kill('SIGKILL'); });

export function parseAddress(text: string): Address {
  const i = text.lastIndexOf(':');
  return { host: text.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(text.slice(i + 1)) };
}

export function buildConfig(dir: string, tree: ConfigTree = {}): ConfigTree {
  const base: ConfigTree = {
    log: { level: 'info' },
    controller: { listen: '127.0.0.1:0' },
    database: { persistence: 'memory', logfile_path: join(dir, 'logfile'), framerate: 512 },
  };
  for (const [section, keys] of Object.entries(tree)) base[section] = { ...base[section], ...keys };
  return base;
}

export class Daemon {
  readonly proc: ChildProcess;
  readonly dir: string;
  readonly configPath: string;
  readonly stderr: string[] = [];
  tcp: Address = { host: '', port: 0 };
  http: Address | null = null;
  private exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(proc: ChildProcess, dir: string, configPath: string) {
    this.proc = proc;
    this.dir = dir;
    this.configPath = configPath;
    this.exited = new Promise((resolve) => proc.on('exit', (code, signal) => { running.delete(proc); resolve({ code, signal }); }));
  }

  static async start(opts: DaemonOptions = {}): Promise<Daemon> {
    const daemon = Daemon.spawn(opts);
    await daemon.waitForReady(opts.readyTimeoutMs ?? 15000);
    return daemon;
  }

  /** Starts the daemon without waiting for "ready" (its log lines are collected at once). */
  static spawn(opts: DaemonOptions = {}): Daemon {
    const dir = opts.dir ?? tempDir();
    const configPath = join(dir, 'tickd.toml');
    writeFileSync(configPath, stringify(buildConfig(dir, opts.config)));
    const args = [...(opts.configInEnv === true ? [] : ['-c', configPath]), ...(opts.workers === null ? [] : ['-w', String(opts.workers ?? 1)]), ...(opts.args ?? [])];
    const argv = opts.asProgram === true ? [TICKD, ...args] : [process.execPath, TICKD, ...args];
    const [file, ...rest] = opts.nofile === undefined ? argv : ['/bin/sh', '-c', `ulimit -n ${opts.nofile} && exec "$@"`, 'sh', ...argv];
    const env = { ...process.env, ...(opts.configInEnv === true && { TICKD_CONFIG: configPath }), ...opts.env };
    const proc = spawn(file!, rest, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(proc);
    const daemon = new Daemon(proc, dir, configPath);
    daemon.collectOutput();
    return daemon;
  }

  /** Resolves with the first log record for which `match` is true (already seen ones count). */
  waitForLog(match: (rec: Record<string, unknown>) => boolean, timeoutMs = 10000): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const check = (line: string): boolean => {
        let rec: Record<string, unknown>;
        try { rec = JSON.parse(line) as Record<string, unknown>; } catch { return false; }
        if (!match(rec)) return false;
        resolve(rec);
        return true;
      };
      for (const l of this.stderr) if (check(l)) return;
      const timer = setTimeout(() => { cleanup(); reject(new Error(`log line not seen in ${timeoutMs} ms; stderr:\n${this.stderr.join('\n')}`)); }, timeoutMs);
      const onLine = (l: string) => { if (check(l)) cleanup(); };
      const onExit = () => { cleanup(); reject(new Error(`tickd exited; stderr:\n${this.stderr.join('\n')}`)); };
      const cleanup = () => { clearTimeout(timer); this.lineListeners.delete(onLine); this.proc.off('exit', onExit); };
      this.lineListeners.add(onLine);
      this.proc.once('exit', onExit);
    });
  }

  private readonly lineListeners = new Set<(line: string) => void>();

  private collectOutput(): void {
    let buf = '';
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (chunk: string) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        this.stderr.push(line);
        for (const l of this.lineListeners) l(line);
      }
    });
    // A dying process may leave a last line without its newline (a crash message): keep it.
    this.proc.stderr!.on('end', () => { if (buf !== '') this.stderr.push(buf); });
    this.proc.stdout!.resume();
  }

  /** Waits for "ready" and reads the bound addresses from it (start() does this itself). */
  async waitForReady(timeoutMs: number): Promise<void> {
    const ready = await this.waitForLog((r) => r['msg'] === 'ready', timeoutMs);
    this.tcp = parseAddress(String(ready['tcp']));
    this.http = typeof ready['http'] === 'string' ? parseAddress(ready['http']) : null;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
    return this.exited;
  }

  kill(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.stop('SIGKILL');
  }

  get exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.exited;
  }
}

/** Runs bin/tickd to completion (for --check, --version, startup errors). */
export function runTickd(
  args: readonly string[], opts: { cwd?: string; timeoutMs?: number; env?: Readonly<Record<string, string>> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [TICKD, ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(proc);
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c) => { stdout += c; });
    proc.stderr.on('data', (c) => { stderr += c; });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`tickd ${args.join(' ')} did not exit; stderr: ${stderr}`)); }, opts.timeoutMs ?? 15000);
    proc.on('exit', (code) => { clearTimeout(timer); running.delete(proc); resolve({ code, stdout, stderr }); });
  });
}
