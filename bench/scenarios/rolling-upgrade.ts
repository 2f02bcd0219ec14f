// Scenario: a rolling upgrade tried for real (issue 42; the steps of tickd(8) UPGRADING for a
// cluster). A live three-node cluster of the code before formats (commit 891f19f, a
// detached git worktree in $TMPDIR/tickd-rolling-old) is upgraded one node at a time, followers first
// and the leader last, to this working tree's bin/tickd, while a client on every node writes.
// It prints a per-step table and the checks, and exits 0 only when every check passes:
//   - no acknowledged write lost (each acknowledged SET there with its execution, each
//     acknowledged REMOVE absent), by QUERY through every node at the end;
//   - every acknowledged due job fired, and a job that fired twice first fired within 1 s of a
//     leader change (the in-flight bound of tickd(8) "Roles and failover");
//   - every node stopped by SIGTERM exited 0, and none exited by itself;
//   - every node ends at active_format 2, and the format mark (a format-2 record on
//     `<cluster>.f`) is absent before each SIGTERM and present after the last node is back.
// Run: npm run scenario:rolling-upgrade (needs nats-server; about 2 minutes, 6 processes on
// top of the load). Node logs are saved to $TMPDIR/tickd-rolling-upgrade-logs/ for reading after.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { LineClient } from '../../test/helpers/client.ts';
import { nodeArgs, Sink } from '../../test/helpers/cluster-nodes.ts';
import { testKeys } from '../../test/helpers/cluster-secret.ts';
import { closeNatsClients, connectNats, natsServerPath, startNats, type NatsCluster } from '../../test/helpers/nats.ts';
import { tempDir } from '../../test/helpers/tmp.ts';
import { openRecord } from '../../lib/jetstream/record-seal.ts';
import { decodePayload } from '../../lib/logfile/codec.ts';
import { gapIn, Load, queryAll } from './rolling-load.ts';
import { clusterView, TickdNode, type ClusterJson } from './rolling-node.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The code before formats (`--from REV` for another). */
const OLD_REV = process.argv.includes('--from') ? process.argv[process.argv.indexOf('--from') + 1]! : '891f19f';
const OLD_DIR = join(tmpdir(), 'tickd-rolling-old');
const CLUSTER = 'rolling';
const SLOTS: readonly string[] = ['n1', 'n2', 'n3'];
const SETTLE_MS = 5_000;
/** "lag near 0" under a load of a few hundred writes/s, read from reports made every second. */
const LAG_OK = 300;
/** The documented in-flight bound for a job run twice around a leader change. */
const DUP_WINDOW_MS = 1_000;
const LOG_DIR = join(tmpdir(), 'tickd-rolling-upgrade-logs');
/**
 * How long to wait for active_format 2 after the last step: the leader records it once every
 * node has read format 2 for 30 s (lib/leadership/format-mark.ts SETTLED_MS), counted from the
 * last old node leaving the view, plus room for a busy machine.
 */
const ACTIVE_WAIT_MS = 75_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const git = (...args: string[]): string => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' });

interface Step {
  readonly t: number; readonly node: string; readonly exit: string; readonly stopMs: number; readonly readyMs: number; readonly caughtUpMs: number;
  /** The longest stretch without an acknowledged write on the other nodes' clients, SIGTERM -> caught up. */
  readonly othersGapMs: number;
  readonly leaderBefore: string; readonly leaderAfter: string; readonly active: string; readonly formats: string; readonly mark: string;
}

/** The old code beside this one: a detached worktree sharing node_modules when the lockfiles agree. */
function oldWorktree(): void {
  if (existsSync(OLD_DIR)) {
    if (!git('worktree', 'list', '--porcelain').includes(`worktree ${OLD_DIR}\n`)) throw new Error(`${OLD_DIR} exists and is no worktree of ${ROOT}: move it away`);
    git('worktree', 'remove', '--force', OLD_DIR); // a previous run's, interrupted
  }
  git('worktree', 'add', '--detach', OLD_DIR, OLD_REV);
  let sameDeps = true;
  try { git('diff', '--quiet', OLD_REV, 'HEAD', '--', 'package.json', 'package-lock.json'); } catch { sameDeps = false; }
  if (sameDeps) symlinkSync(join(ROOT, 'node_modules'), join(OLD_DIR, 'node_modules'));
  else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: OLD_DIR, stdio: 'inherit' });
}

/** The format mark on `<cluster>.f`: its sequence and version; null when there is none. */
async function formatMark(jsm: JetStreamManager): Promise<{ seq: number; version: string; at: number } | null> {
  const subject = `${CLUSTER}.f`;
  const m = await jsm.streams.getMessage(CLUSTER, { last_by_subj: subject })
    .catch((err: Error) => { if (/no message found|not found/i.test(err.message)) return null; throw err; });
  if (m === null) return null;
  const body = Buffer.from(m.data);
  const at = openRecord(testKeys, CLUSTER, subject, m.seq, body, 0, body.length);
  const stored = { seq: m.seq, at: m.time.getTime() };
  if (typeof at === 'string') return { ...stored, version: `unsealed (${at})` };
  try {
    const rec = decodePayload(body, at);
    return { ...stored, version: rec.t === 'format' ? String(rec.version) : `not a format record (${rec.t})` };
  } catch (err) {
    return { ...stored, version: `undecodable (${(err as Error).message})` };
  }
}

async function main(): Promise<number> {
  const natsBin = natsServerPath();
  if (natsBin === null) throw new Error('nats-server is missing (looked in /usr/sbin, /usr/bin, /usr/local/bin)');
  oldWorktree();
  const all: TickdNode[] = [];
  const nodes = new Map<string, TickdNode>();
  const sink = new Sink();
  let nats: NatsCluster | null = null;
  let load: Load | null = null;
  const log = (line: string): void => { process.stderr.write(`[${new Date().toISOString().slice(11, 23)}] ${line}\n`); };
  try {
    nats = await startNats(natsBin, 3);
    await sink.listen();
    const dirs = new Map(SLOTS.map((s) => [s, tempDir('tickd-rolling-')]));
    const start = (slot: string, version: 'old' | 'new'): TickdNode => {
      const bin = version === 'old' ? join(OLD_DIR, 'bin/tickd') : join(ROOT, 'bin/tickd');
      const n = new TickdNode(slot, version, bin, dirs.get(slot)!, nodeArgs(nats!, { cluster: CLUSTER, name: slot }), { http: { listen: '127.0.0.1:0' } });
      all.push(n);
      nodes.set(slot, n);
      return n;
    };
    const views = async (): Promise<ClusterJson[]> => (await Promise.all([...nodes.values()].map(clusterView))).filter((v) => v !== null);
    const leaderNow = async (): Promise<string> => (await views()).find((v) => v.leader !== null)?.leader ?? 'none';
    /** Formats as a new node sees them (an old node's view has none); '-' while none runs. */
    const formats = async (): Promise<{ active: string; formats: string }> => {
      const v = (await views()).find((x) => x.active_format !== undefined);
      if (v === undefined) return { active: '-', formats: '-' };
      return { active: String(v.active_format), formats: SLOTS.map((s) => `${s}:${v.nodes.find((m) => m.name === s)?.format ?? '?'}`).join(' ') };
    };

    log(`starting 3 nodes of ${OLD_REV} (cluster ${CLUSTER})`);
    await Promise.all(SLOTS.map((s) => start(s, 'old').ready()));
    const t0 = Date.now();
    for (;;) {
      const v = await views();
      if (v.length === 3 && v.every((x) => x.leader !== null && x.nodes.length === 3)) break;
      if (Date.now() - t0 > 30_000) throw new Error('no leader seen by all 3 old nodes in 30 s');
      await sleep(200);
    }
    const rc = await LineClient.connect(nodes.get('n1')!.tcp);
    const ruleReply = (await rc.request('r', `RULE SET up. up. http POST http://127.0.0.1:${sink.port}/`, 20_000)).at(-1);
    rc.close();
    if (ruleReply !== 'r OK') throw new Error(`RULE SET: ${ruleReply}`);
    const nc = await connectNats(nats.urls);
    const jsm = await jetstreamManager(nc);

    load = new Load((slot) => nodes.get(slot));
    load.start(SLOTS);
    const tStart = Date.now();
    const since = (): number => (Date.now() - tStart) / 1000;
    await sleep(SETTLE_MS);
    const steps: Step[] = [];
    const f0 = await formats();
    const leader0 = await leaderNow();
    steps.push({ t: since(), node: 'start', exit: '', stopMs: 0, readyMs: 0, caughtUpMs: 0, othersGapMs: 0, leaderBefore: leader0, leaderAfter: leader0, ...f0, mark: String((await formatMark(jsm))?.seq ?? 'none') });
    const markBefore: string[] = [];
    const changes: number[] = []; // SIGTERMs of a leader (handover starts); log lines are added at the end
    const upgraded = new Set<string>();
    let lastStopAt = 0;
    let lastBackAt = 0;
    for (let k = 0; k < SLOTS.length; k++) {
      const leaderBefore = await leaderNow();
      const pending = SLOTS.filter((s) => !upgraded.has(s));
      const slot = pending.find((s) => s !== leaderBefore) ?? pending[0]!;
      const markNow = await formatMark(jsm);
      if (markNow !== null) markBefore.push(`before stopping ${slot} (step ${k + 1}): seq ${markNow.seq}, version ${markNow.version}`);
      log(`step ${k + 1}: SIGTERM ${slot} (${slot === leaderBefore ? 'leader' : 'follower'})`);
      const tStop = Date.now();
      if (slot === leaderBefore) changes.push(tStop);
      if (k === SLOTS.length - 1) lastStopAt = tStop;
      const ex = await nodes.get(slot)!.stop();
      const tStart2 = Date.now();
      const fresh = start(slot, 'new');
      await fresh.ready();
      const readyMs = Date.now() - tStart2;
      let view: ClusterJson | null = null;
      for (const until = Date.now() + 60_000; Date.now() < until; await sleep(100)) {
        view = await clusterView(fresh);
        const self = view?.nodes.find((m) => m.name === slot);
        if (view !== null && view.leader !== null && self !== undefined && self.role !== undefined && self.lag <= LAG_OK) break;
        view = null;
      }
      if (view === null) throw new Error(`${slot} (new) did not show itself caught up in GET /cluster within 60 s`);
      const caughtUpMs = Date.now() - tStart2;
      const othersGapMs = Math.max(...SLOTS.filter((s) => s !== slot).map((s) => gapIn(load!, s, tStop, Date.now())));
      if (k === SLOTS.length - 1) lastBackAt = Date.now();
      upgraded.add(slot);
      const mark = await formatMark(jsm);
      steps.push({
        t: since(), node: slot, exit: `${ex.code ?? ex.signal}${ex.killed ? ' (KILLED)' : ''}`, stopMs: ex.ms, readyMs, caughtUpMs, othersGapMs,
        leaderBefore, leaderAfter: view.leader!, ...(await formats()), mark: mark === null ? 'none' : `seq ${mark.seq} v${mark.version}`,
      });
      log(`step ${k + 1}: ${slot} back (new code), leader ${view.leader}`);
      await sleep(SETTLE_MS);
    }

    // Every node must end at format 2, and the leader then writes the format mark.
    const tWait = Date.now();
    let activeAll = false;
    for (; Date.now() - tWait < ACTIVE_WAIT_MS; await sleep(200)) {
      const v = await views();
      if (v.length === 3 && v.every((x) => x.active_format === 2)) { activeAll = true; break; }
    }
    const endViews = await views();
    const activeEnd = endViews.map((v) => `${v.node}:${v.active_format ?? '?'}`).join(' ');
    const upgradeNeeded = endViews.filter((v) => (v.upgrade_needed ?? null) !== null).map((v) => `${v.node}: ${JSON.stringify(v.upgrade_needed)}`);
    let markAfter: Awaited<ReturnType<typeof formatMark>> = null;
    for (const until = Date.now() + 30_000; markAfter === null && Date.now() < until; await sleep(250)) markAfter = await formatMark(jsm);
    steps.push({ t: since(), node: 'end', exit: '', stopMs: 0, readyMs: 0, caughtUpMs: 0, othersGapMs: 0, leaderBefore: await leaderNow(), leaderAfter: await leaderNow(), ...(await formats()),
      mark: markAfter === null ? 'none' : `seq ${markAfter.seq} v${markAfter.version}` });

    log('stopping the load; waiting for due jobs to fire');
    await load.stop();
    const due = [...load.acked].filter(([, a]) => a.due);
    const lastDue = Math.max(0, ...due.map(([, a]) => Number(a.exec / 1_000_000n)));
    const fired = (): Map<string, number> => sink.counts();
    while (Date.now() < lastDue + 15_000 && due.some(([id]) => !fired().has(id))) await sleep(200);
    await sleep(1_500); // a late second firing still counts
    const counts = fired();

    // Lost writes, through every node.
    const lost: string[] = [];
    for (const slot of SLOTS) {
      const node = nodes.get(slot)!;
      const seen = new Map([...await queryAll(node, 'up.'), ...await queryAll(node, 'far.')]);
      for (const [id, a] of load.acked) {
        if (load.uncertain.has(id)) continue;
        const got = seen.get(id);
        if (load.removed.has(id)) { if (got !== undefined) lost.push(`${slot}: ${id} removed (acked) but there`); continue; }
        if (got === undefined) lost.push(`${slot}: ${id} (acked ${new Date(a.at).toISOString().slice(11, 23)} via ${a.slot}) missing`);
        else if (got[1] !== a.exec) lost.push(`${slot}: ${id} execution ${got[1]} != acked ${a.exec}`);
      }
    }
    const notFired = due.filter(([id]) => !counts.has(id)).map(([id]) => id);

    // Duplicates: first arrival against every leader change (handover SIGTERM, role lines).
    for (const n of all) for (const r of [...n.logged('"msg":"role changed: leader"'), ...n.logged('"msg":"role changed: follower"')]) changes.push(r.at);
    const dups: string[] = [];
    let dupsOutside = 0;
    for (const [id, c] of counts) {
      if (c < 2) continue;
      const first = sink.fired.find((f) => f.id === id)!.at;
      const near = Math.min(...changes.map((t) => Math.abs(first - t)));
      if (near > DUP_WINDOW_MS) dupsOutside++;
      dups.push(`${id} x${c}, first ${new Date(first).toISOString().slice(11, 23)}, ${near} ms from a leader change`);
    }

    const finalExits = (await Promise.all(SLOTS.map(async (s) => { const e = await nodes.get(s)!.stop(); return `${s}:${e.code ?? e.signal}`; }))).join(' ');
    const badExits: string[] = [];
    for (const n of all) {
      const x = await n.exit;
      if (!n.stopRequested) badExits.push(`${n.name} (${n.version}) exited by itself: ${x.code ?? x.signal}; ${n.complaints().at(-1)?.slice(0, 200) ?? ''}`);
      else if (x.code !== 0) badExits.push(`${n.name} (${n.version}) exit ${x.code ?? x.signal} after SIGTERM`);
    }

    const complaints = new Map<string, number>();
    for (const n of all) {
      for (const l of n.complaints()) {
        const msg = /"msg":"([^"]*)"/.exec(l)?.[1] ?? l.slice(0, 120);
        const key = `${n.version} ${/"level":(\d+)/.exec(l)?.[1] === '40' ? 'WARN' : 'ERROR'} ${msg}`;
        complaints.set(key, (complaints.get(key) ?? 0) + 1);
      }
    }

    // The report.
    const out: string[] = [];
    const p = (s = ''): void => { out.push(s); };
    const head = await loadavg();
    p(`rolling upgrade ${OLD_REV} -> working tree (${git('rev-parse', '--short', 'HEAD').trim()}${git('status', '--porcelain', '--', 'lib', 'cluster').trim() === '' ? '' : ' + uncommitted lib/'}), 3 NATS + 3 nodes, lease TTL 3 s; loadavg at end ${head}`);
    p('   t(s) step   exit stop ms ready ms caught-up ms others held ms leader before->after active_format formats (a new node\'s view) mark on .f');
    for (const s of steps) {
      const n = (x: number, w: number): string => String(x || '').padStart(w);
      p(`${s.t.toFixed(1).padStart(7)} ${s.node.padEnd(6)} ${s.exit.padEnd(4)} ${n(s.stopMs, 7)} ${n(s.readyMs, 8)} ${n(s.caughtUpMs, 12)} ${n(s.othersGapMs, 14)} ` +
        `${`${s.leaderBefore}->${s.leaderAfter}`.padEnd(20)} ${s.active.padEnd(13)} ${s.formats.padEnd(24)} ${s.mark}`);
    }
    const acked = load.acked.size + load.removed.size;
    p(`load: ${load.sent} writes sent, ${acked} acknowledged (${load.acked.size} SET, ${load.removed.size} REMOVE; ${due.length} due), ${load.uncertain.size} REMOVE uncertain; ` +
      `reconnects ${SLOTS.map((s) => `${s}:${load!.reconnects.get(s) ?? 0}`).join(' ')}; longest stretch without an ack ${SLOTS.map((s) => `${s}:${load!.longestGap.get(s) ?? 0}ms`).join(' ')}`);
    p(`the new nodes' exit at the end (SIGTERM): ${finalExits}`);
    p(`not acknowledged: ${[...load.failures].map(([k, v]) => `${v.length} x ${k} (at ${v.slice(0, 4).map((t) => ((t - tStart) / 1000).toFixed(1)).join(', ')}${v.length > 4 ? ', ...' : ''} s)`).join('; ') || 'none'}`);
    const checks: Array<[string, boolean, string]> = [
      ['acknowledged writes lost (QUERY through n1, n2, n3)', lost.length === 0, `${lost.length}${lost.length > 0 ? `: ${lost.slice(0, 5).join('; ')}` : ''}`],
      ['acknowledged due jobs never fired', notFired.length === 0, `${notFired.length}${notFired.length > 0 ? `: ${notFired.slice(0, 5).join(' ')}` : ''}`],
      [`jobs fired more than once, first firing > ${DUP_WINDOW_MS} ms from a leader change`, dupsOutside === 0, `${dupsOutside} (of ${dups.length} fired twice)`],
      ['nodes that exited non-zero or by themselves', badExits.length === 0, `${badExits.length}${badExits.length > 0 ? `: ${badExits.join('; ')}` : ''} (${all.length} processes)`],
      ['active_format 2 on every node at the end', activeAll, activeEnd],
      ['upgrade_needed on no node at the end', upgradeNeeded.length === 0, upgradeNeeded.join('; ') || 'none'],
      ['format mark absent while an old node ran (checked before each SIGTERM)', markBefore.length === 0, markBefore.join('; ') || 'absent at all 3'],
      ['format mark version 2 on .f after the last node', markAfter?.version === '2',
        markAfter === null ? `NEVER APPEARED within ${ACTIVE_WAIT_MS / 1000 + 30} s of the last step (the leader writes no format mark?)`
          : `seq ${markAfter.seq}, version ${markAfter.version}, stored ${((markAfter.at - lastStopAt) / 1000).toFixed(1)} s after the last SIGTERM, ${((markAfter.at - lastBackAt) / 1000).toFixed(1)} s after that node was back`],
    ];
    for (const [what, ok, detail] of checks) p(`${ok ? 'PASS' : 'FAIL'}  ${what}: ${detail}`);
    for (const d of dups) p(`  twice: ${d}`);
    p(`node warnings/errors: ${[...complaints].map(([k, v]) => `${v} x ${k}`).join('; ') || 'none'}`);
    p(`logs: ${LOG_DIR}/`);
    process.stdout.write(`${out.join('\n')}\n`);
    return checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    if (load !== null) await load.stop();
    saveLogs(all);
    await Promise.all([...nodes.values()].filter((n) => n.alive).map((n) => n.stop(10_000)));
    await closeNatsClients();
    await sink.close();
    if (nats !== null) await nats.stop();
    // The node_modules link first, so that nothing can follow it into this checkout's.
    try { if (lstatSync(join(OLD_DIR, 'node_modules')).isSymbolicLink()) unlinkSync(join(OLD_DIR, 'node_modules')); } catch { /* npm ci'd, or gone */ }
    try { git('worktree', 'remove', '--force', OLD_DIR); } catch (err) { process.stderr.write(`worktree removal: ${(err as Error).message}\n`); }
  }
}

/** The nodes' logs, kept after the run (their temp dirs are removed at exit). */
function saveLogs(all: readonly TickdNode[]): void {
  rmSync(LOG_DIR, { recursive: true, force: true });
  mkdirSync(LOG_DIR);
  all.forEach((n, i) => writeFileSync(join(LOG_DIR, `${i + 1}-${n.name}-${n.version}.log`), `${n.stderr.join('\n')}\n`));
}

async function loadavg(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
}

main().then((code) => process.exit(code), (err: unknown) => {
  process.stderr.write(`rolling upgrade: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
