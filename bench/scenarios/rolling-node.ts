// One tickd node of the rolling-upgrade scenario, started from a given checkout's bin/tickd.
// test/helpers/daemon.ts's Daemon always runs this checkout's bin/tickd (its TICKD constant),
// and the scenario must start the old code from a git worktree too, so this is the same
// spawn (same config file format via buildConfig, `-c <dir>/tickd.toml -w 1`, stderr kept
// line by line, "ready" parsed for the bound ports) with the binary as a parameter.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'smol-toml';
import { buildConfig, parseAddress, type Address, type ConfigTree } from '../../test/helpers/daemon.ts';

export interface Exit { readonly code: number | null; readonly signal: NodeJS.Signals | null }

const running = new Set<ChildProcess>();
// Whatever ends the scenario, no node outlives it (the scenario's own processes only).
process.on('exit', () => { for (const p of running) p.kill('SIGKILL'); });

export class TickdNode {
  readonly stderr: string[] = [];
  tcp: Address = { host: '', port: 0 };
  http: Address = { host: '', port: 0 };
  readonly exit: Promise<Exit>;
  /** Set when the scenario itself sent the signal: any other exit is a crash. */
  stopRequested = false;
  private readonly proc: ChildProcess;
  private readonly listeners = new Set<(line: string) => void>();

  readonly name: string;
  readonly version: 'old' | 'new';

  constructor(name: string, version: 'old' | 'new', bin: string, dir: string, args: readonly string[], config: ConfigTree) {
    this.name = name;
    this.version = version;
    const configPath = join(dir, 'tickd.toml');
    writeFileSync(configPath, stringify(buildConfig(dir, config)));
    this.proc = spawn(process.execPath, [bin, '-c', configPath, '-w', '1', ...args], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    running.add(this.proc);
    this.exit = new Promise((resolve) => this.proc.on('exit', (code, signal) => { running.delete(this.proc); resolve({ code, signal }); }));
    let buf = '';
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (chunk: string) => {
      buf += chunk;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        this.stderr.push(line);
        for (const l of this.listeners) l(line);
      }
    });
    // A crash's last words (Node's uncaught error text) may come without a newline.
    this.proc.stderr!.on('end', () => { if (buf !== '') this.stderr.push(buf); });
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Waits for the "ready" record and reads the bound TCP and HTTP addresses from it. */
  async ready(timeoutMs = 60_000): Promise<void> {
    const rec = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = (line: string): boolean => {
        if (!line.includes('"msg":"ready"')) return false;
        resolve(JSON.parse(line) as Record<string, unknown>);
        return true;
      };
      if (this.stderr.some(check)) return;
      const done = (): void => { clearTimeout(timer); this.listeners.delete(onLine); };
      const onLine = (l: string): void => { if (check(l)) done(); };
      const timer = setTimeout(() => { done(); reject(new Error(`${this.name} (${this.version}) not ready in ${timeoutMs} ms:\n${this.stderr.slice(-20).join('\n')}`)); }, timeoutMs);
      this.listeners.add(onLine);
      void this.exit.then((e) => { done(); reject(new Error(`${this.name} (${this.version}) exited ${e.code ?? e.signal} before ready:\n${this.stderr.slice(-20).join('\n')}`)); });
    });
    this.tcp = parseAddress(String(rec['tcp']));
    this.http = parseAddress(String(rec['http']));
  }

  /** SIGTERM (graceful: a leader hands the lease over first); SIGKILL after `graceMs`. */
  async stop(graceMs = 30_000): Promise<Exit & { readonly ms: number; readonly killed: boolean }> {
    const t0 = Date.now();
    this.stopRequested = true;
    if (this.alive) this.proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((r) => { timer = setTimeout(() => r(null), graceMs); });
    const e = await Promise.race([this.exit, late]);
    clearTimeout(timer);
    if (e !== null) return { ...e, ms: Date.now() - t0, killed: false };
    this.proc.kill('SIGKILL');
    return { ...(await this.exit), ms: Date.now() - t0, killed: true };
  }

  /** Times (ms since the epoch) and text of the log records whose line contains `needle`. */
  logged(needle: string): Array<{ readonly at: number; readonly line: string }> {
    const out: Array<{ at: number; line: string }> = [];
    for (const line of this.stderr) {
      if (!line.includes(needle)) continue;
      try { out.push({ at: Date.parse((JSON.parse(line) as { time: string }).time), line }); } catch { /* not a record */ }
    }
    return out;
  }

  /** Warnings and worse (bunyan level >= 40), and non-JSON lines (a crash's text). */
  complaints(): string[] {
    return this.stderr.filter((l) => !l.startsWith('{') || /"level":(4|5|6)0/.test(l));
  }
}

/** GET /cluster of a node, parsed; null when it does not answer (stopping, restarting). */
export async function clusterView(node: TickdNode): Promise<ClusterJson | null> {
  if (!node.alive || node.http.port === 0) return null;
  try {
    const res = await fetch(`http://${node.http.host}:${node.http.port}/cluster`, { signal: AbortSignal.timeout(5_000) });
    return res.ok ? (await res.json()) as ClusterJson : null;
  } catch {
    return null;
  }
}

/** GET /cluster's answer; an old node's has no format fields. */
export interface ClusterJson {
  readonly node: string;
  readonly role: string;
  readonly leader: string | null;
  readonly last_seq: number;
  readonly nodes: ReadonlyArray<{ readonly name: string; readonly role: string; readonly lag: number; readonly format?: number }>;
  readonly format?: number;
  readonly active_format?: number;
  readonly upgrade_needed?: unknown;
}
