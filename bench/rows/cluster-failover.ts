// Row: cluster failover (tickd(8) CLUSTER MODE). One 3-server NATS cluster on this machine (the
// bench's own servers on free ports, never the one at 4222) and 3 tickd nodes (lease TTL 3 s,
// debug log for the `job fired` lines), in one run:
// - firing lateness of probes scheduled through the leader, beside a single memory-mode node
//   measured just before the cluster starts (same framerate, same probes);
// - durable SET/s, 64 closed-loop connections for 5 s after 1 s, through a follower, then
//   through the leader;
// - failover rounds. Each round SETs, through a follower, a batch of jobs due every 5 ms on an
//   http rule to the bench's sink, starts a closed-loop writer (8 connections through the
//   followers, far-future ids, every OK kept), and 0.5-1.5 s (seeded random) after the batch
//   starts coming due stops the leader: SIGKILL; SIGKILL together with the NATS server leading
//   the stream (a whole machine lost; restarted after the round); or SIGTERM (handover). The
//   failover time is the stop -> the sink's arrival of the first job a new leader fired (which
//   node fired a job comes from its `job fired` line: an old leader's last firings do not
//   count). 50 ms after the stop one SET goes to each surviving node on a new connection (how
//   long writes are unavailable). Per surviving node, the stop -> the first OK on one of the
//   writer's connections to it (opened before the stop) to a SET written after the old leader
//   stopped leading (its exit after a SIGKILL, its `role changed: follower` line after a
//   SIGTERM): how long a client already connected is held up; the writer runs until every one
//   of its connections has had one (at most 30 s). 500 ms after that and the first fire the
//   writer stops (waiting 1 s for replies still due; in the first SIGKILL and SIGTERM rounds,
//   for all of them), and a QUERY through the new leader must show every acknowledged id at its
//   acknowledged execution. Once every due job has arrived, jobs that arrived twice are
//   counted; a new node (new name) replaces the stopped one. 10 SIGKILL rounds, 5 SIGTERM
//   rounds, then 10 rounds with the NATS server (5 to 9 when 10 would take the row past 6 min;
//   the note says how many).
import type { JetStreamManager } from '@nats-io/jetstream';
import { jetstreamManager } from '@nats-io/jetstream';
import { type Daemon } from '../../test/helpers/daemon.ts';
import { ledSince, roleOf, startNode, waitForLeader } from '../../test/helpers/cluster-nodes.ts';
import { closeNatsClients, connectNats, natsServerPath, startNats, type NatsCluster } from '../../test/helpers/nats.ts';
import { prng } from '../../test/helpers/prng.ts';
import { command } from '../lib/command.ts';
import {
  ackedWriter, closedLoopRate, describeCounts, firstArrivalBy, firstToLog, lastInfo, LogCursor, loggedAt, missingFrom, probeLateness, type Lateness,
  queryJobs, queryJobStates, streamLeader, timedSet, waitReplicasCurrent, warnings,
} from '../lib/failover.ts';
import { sleep, stopDaemon, wallMs, withDaemon } from '../lib/harness.ts';
import { FAR_FUTURE_NS, loadSets } from '../lib/pipeline.ts';
import { firingsOf } from '../lib/probes.ts';
import { HttpSink } from '../lib/sink.ts';
import { spread } from '../lib/stats.ts';
import type { Figure, Row, RowOptions } from '../lib/suite.ts';

const CLUSTER = 'benchfo';
const TTL_S = 3;
const TTL = `${TTL_S}s`;
const DEBUG = { log: { level: 'debug' } };
const KILL_ROUNDS = 10;
const NATS_ROUNDS = 10;
const NATS_ROUNDS_SHORT = 5;
const TERM_ROUNDS = 5;
const BUDGET_MS = 6 * 60_000;
const DUE_SPACING_MS = 5;
/**
 * How long each kind's batch keeps coming due: past the stop (<= 1.5 s in) plus the longest
 * failover seen here, with margin. A SIGTERMed leader keeps firing while its workers drain,
 * which can take their 5 s grace (when it still waits on commands it forwarded as a follower).
 */
const SPAN_MS = { kill: 7_000, nats: 18_000, term: 8_000 } as const;
const LOAD_LEAD_MS = 1200;
const WRITERS_PER_FOLLOWER = 4;
const THROUGHPUT_CONNECTIONS = 64;
const PROBES = 1000;
const WARMUP_PROBES = 200;
const PROBE_SPACING_MS = 2;
const PROBE_LEAD_MS = 1500;
/** How long the writer may wait for every existing connection to be acknowledged again. */
const RESUME_WAIT_MS = 30_000;
/** A log line's time is in whole ms, and the bench's wall clock is not the daemon's Date. */
const LOG_SLACK_MS = 5;

type Kind = keyof typeof SPAN_MS;
const KIND_TEXT: Record<Kind, string> = { kill: 'leader SIGKILL', nats: 'leader + stream-leading NATS server SIGKILL', term: 'leader SIGTERM' };

interface Round {
  readonly failoverMs: number;
  /** Stop -> the new leader's "role changed: leader" line (ms resolution). */
  readonly leaseMs: number;
  /** First arrivals of the jobs that arrived twice, ms after the stop (negative: before). */
  readonly twiceAtMs: number[];
  readonly missing: number;
  readonly due: number;
  /** Writes answered OK (the writer's and the timed SETs), and how many of them the QUERY missed. */
  readonly acked: number;
  readonly lost: number;
  /** The writer's writes still unanswered when it stopped, and how many of them the QUERY showed. */
  readonly unanswered: number;
  readonly unansweredApplied: number;
  /** The writer's replies other than OK: ms after the stop, and their text. */
  readonly errors: ReadonlyArray<{ readonly afterMs: number; readonly text: string }>;
  /** Of those, how many the QUERY showed applied. */
  readonly erroredApplied: number;
  /** SIGTERM: the old leader's last firing (tick time) and its exit, ms after the stop. */
  readonly oldFiredUntilMs: number | null;
  readonly exitMs: number | null;
  /** A SET on a new connection to each surviving node, 50 ms after the stop: ms to its reply, and the reply. */
  readonly sets: ReadonlyArray<{ readonly ms: number; readonly reply: string }>;
  /**
   * Per surviving node: ms after the stop until a SET written after the old leader stopped
   * leading was answered OK on the first of its writer's connections, and on every one of
   * them (null: not within RESUME_WAIT_MS); and whether it became the new leader.
   */
  readonly resumed: ReadonlyArray<{ readonly firstMs: number | null; readonly allMs: number | null; readonly newLeader: boolean }>;
  /** The NATS server killed also led the lease bucket (null: no NATS server killed). */
  readonly leaseBucketToo: boolean | null;
  readonly msTaken: number;
}

interface Ctx {
  readonly nats: NatsCluster;
  readonly jsm: JetStreamManager;
  readonly sink: HttpSink;
  readonly nodes: Daemon[];
  readonly rand: () => number;
  readonly progress: (line: string) => void;
  /** Daemon warnings and errors seen during the rounds, per kind. */
  readonly logged: Map<Kind, Map<string, number>>;
  serial: number;
}

const live = (ctx: Ctx): Daemon[] => ctx.nodes.filter((d) => d.proc.exitCode === null && d.proc.signalCode === null);
const nsAt = (ms: number): bigint => BigInt(Math.round(ms * 1000)) * 1000n;

/** Arrivals of `pattern` from index `from` on, per job, until `count` jobs arrived or the deadline (then 300 ms more). */
async function arrivalsOf(sink: HttpSink, from: number, pattern: string, count: number, deadlineMs: number): Promise<Map<string, number[]>> {
  const seen = new Map<string, number[]>();
  let read = from;
  const drain = (): void => {
    for (; read < sink.arrivals.length; read++) {
      const a = sink.arrivals[read]!;
      if (!a.jobId.startsWith(pattern)) continue;
      const list = seen.get(a.jobId);
      if (list === undefined) seen.set(a.jobId, [a.arrivalMs]);
      else list.push(a.arrivalMs);
    }
  };
  for (drain(); seen.size < count && wallMs() < deadlineMs; drain()) await sleep(50);
  await sleep(300);
  drain();
  return seen;
}

/** One round: `first` rounds let the writer wait for every reply (how a write in flight at the stop ends). */
async function round(ctx: Ctx, kind: Kind, first: boolean): Promise<Round> {
  const t0 = performance.now();
  const serial = ctx.serial++;
  const leader = await waitForLeader(live(ctx));
  const others = live(ctx).filter((d) => d !== leader);
  const pattern = `fo.${serial}.`;
  const count = SPAN_MS[kind] / DUE_SPACING_MS;
  const firstDue = wallMs() + LOAD_LEAD_MS;
  const sinkFrom = ctx.sink.arrivals.length;
  await loadSets(others[0]!.tcp, 1, count, `fo.${serial}`, (_c, i) => nsAt(firstDue + i * DUE_SPACING_MS));
  const loadedLate = wallMs() - firstDue;
  const victimName = kind === 'nats' ? await streamLeader(ctx.jsm, CLUSTER) : null;
  const victim = ctx.nats.servers.find((s) => s.name === victimName);
  if (kind === 'nats' && victim === undefined) throw new Error(`no NATS server leads stream ${CLUSTER} (${victimName})`);
  const leaseBucketToo = victim === undefined ? null : (await streamLeader(ctx.jsm, `KV_${CLUSTER}-lease`)) === victim.name;
  const execBase = FAR_FUTURE_NS + BigInt(serial) * 1_000_000_000_000n;
  const writer = await ackedWriter(others.map((d) => d.tcp), WRITERS_PER_FOLLOWER, 'fw', (n) => execBase + BigInt(n));
  const cursors = [leader, ...others].map((d) => new LogCursor(d));
  // The stop: 0.5-1.5 s after the batch starts coming due (after it is loaded, if that was late).
  await sleep(Math.max(0, firstDue + Math.max(0, loadedLate) + 500 + ctx.rand() * 1000 - wallMs()));
  const stoppedMs = wallMs();
  const gone = (kind === 'term' ? leader.stop('SIGTERM') : leader.kill()).then(() => wallMs());
  if (victim !== undefined) await victim.kill();
  const timedSets = sleep(50).then(() => Promise.all(others.map((d, k) => timedSet(d.tcp, `fw.timed.${k}`, execBase + 900_000_000_000n + BigInt(k)))));
  const next = await firstToLog(cursors.slice(1), 60_000, '"job fired"', `"job":"${pattern}`);
  if (next === null) {
    const state = [leader, ...others].map((d) => `${d === leader ? 'old leader' : 'node'} ${roleOf(d)}${d.proc.exitCode !== null || d.proc.signalCode !== null ? ` (exited ${d.proc.exitCode ?? d.proc.signalCode})` : ''}`);
    const said = new Map<string, number>();
    for (const c of cursors.slice(1)) warnings(c.since(), said);
    const last = cursors.slice(1).map((c) => lastInfo(c.since()));
    const firedAny = cursors.slice(1).map((c) => c.since().filter((l) => l.includes('"msg":"job fired"')).length);
    const arrived = ctx.sink.arrivals.filter((a) => a.arrivalMs > stoppedMs && a.jobId.startsWith(pattern)).length;
    throw new Error(`${kind} round ${serial}: no other node fired a job within 60 s (${state.join(', ')}; the old leader fired ${firingsOf(leader, pattern).length} of ${count}; ` +
      `since the stop the others logged "job fired" for any job ${firedAny.join('/')} times, the sink got ${arrived} of the batch, and they warned ${describeCounts(said)}; ` +
      `their last info lines: ${last.join(' / ')})`);
  }
  // When the old leader stopped leading: a SET written after that is acknowledged through a new one only.
  const leftLeadAt = kind === 'term' ? (loggedAt(cursors[0]!.since(), '"msg":"role changed: follower"') ?? stoppedMs) + LOG_SLACK_MS : await gone;
  const resumeBy = wallMs() + RESUME_WAIT_MS;
  while (writer.firstOkSentAfter(leftLeadAt).some((node) => node.includes(null)) && wallMs() < resumeBy) await sleep(50);
  const resumed = writer.firstOkSentAfter(leftLeadAt).map((node, k) => {
    const known = node.filter((t) => t !== null);
    return {
      firstMs: known.length === 0 ? null : Math.min(...known) - stoppedMs,
      allMs: known.length < node.length ? null : Math.max(...known) - stoppedMs,
      newLeader: others[k] === next,
    };
  });
  await sleep(500);
  const unanswered = await writer.stop(first ? 30_000 : 1_000);
  const sets = await timedSets;
  const acked = new Map(writer.acked);
  sets.forEach((t, k) => { if (t.reply === 'OK') acked.set(`fw.timed.${k}`, execBase + 900_000_000_000n + BigInt(k)); });
  const jobs = await queryJobs(next.tcp, 'fw.');
  // A replacement tickd node starts while the rest of the batch comes due (not measured); after a
  // NATS server's loss it waits for that server's restart, which waits for the batch.
  const replace = (): Promise<Daemon> => startNode(ctx.nats, { cluster: CLUSTER, name: `node-r${serial}`, ttl: TTL, config: DEBUG });
  const early = victim === undefined ? replace() : null;
  const seen = await arrivalsOf(ctx.sink, sinkFrom, pattern, count, firstDue + SPAN_MS[kind] + 30_000);
  const firstMs = firstArrivalBy(ctx.sink.arrivals.slice(sinkFrom), pattern, others);
  // Due jobs that never reached the sink: their status now, and which nodes' logs say they fired them.
  const never = count - seen.size === 0 ? '' : await (async () => {
    const states = await queryJobStates(next.tcp, pattern);
    const ids = [...states.keys()].filter((id) => !seen.has(id));
    const firedBy = [leader, ...others].map((d) => firingsOf(d, pattern).filter((f) => !seen.has(f.jobId)).length);
    return ` (now ${describeCounts(countOf(ids.map((id) => states.get(id)!)))}; "job fired" by the old leader ${firedBy[0]}, by the others ${firedBy.slice(1).join('/')}; e.g. ${ids.slice(0, 3).join(' ')})`;
  })();
  if (firstMs === null) throw new Error(`${kind} round ${serial}: no job fired by a new leader reached the sink`);
  const roundLog = new Map<string, number>();
  for (const c of cursors) warnings(c.since(), roundLog);
  const logged = ctx.logged.get(kind) ?? new Map<string, number>();
  for (const [k, n] of roundLog) logged.set(k, (logged.get(k) ?? 0) + n);
  ctx.logged.set(kind, logged);
  const exitedAt = await Promise.race([gone, sleep(30_000).then(() => null)]);
  if (exitedAt === null) await leader.kill();
  const oldFired = kind === 'term' ? firingsOf(leader, pattern).map((f) => Number(f.executionNs / 1000n) / 1000 + f.latenessMs) : [];
  let natsMs = 0;
  if (victim !== undefined) {
    await victim.restart();
    natsMs = await waitReplicasCurrent(ctx.jsm, [CLUSTER, `KV_${CLUSTER}-lease`], ctx.nats.servers.length - 1, 60_000);
  }
  const back = await (early ?? replace());
  ctx.nodes.push(back);
  const r: Round = {
    failoverMs: firstMs - stoppedMs,
    leaseMs: (ledSince(next) ?? Number.NaN) - stoppedMs,
    twiceAtMs: [...seen.values()].filter((l) => l.length > 1).map((l) => Math.min(...l) - stoppedMs),
    missing: count - seen.size,
    due: count,
    acked: acked.size,
    lost: missingFrom(jobs, acked),
    unanswered: unanswered.size,
    unansweredApplied: unanswered.size - missingFrom(jobs, unanswered),
    errors: writer.errors.map((e) => ({ afterMs: e.at - stoppedMs, text: e.text })),
    erroredApplied: writer.errors.filter((e) => jobs.get(e.id) === String(e.exec)).length,
    oldFiredUntilMs: oldFired.length === 0 ? null : Math.max(...oldFired) - stoppedMs,
    exitMs: kind === 'term' && exitedAt !== null ? exitedAt - stoppedMs : null,
    sets,
    resumed,
    leaseBucketToo,
    msTaken: performance.now() - t0,
  };
  ctx.progress(`  ${kind} #${serial} (${(r.msTaken / 1000).toFixed(1)} s): first fire by the new leader +${r.failoverMs.toFixed(0)} ms (lease +${r.leaseMs.toFixed(0)} ms)` +
    `${victim === undefined ? '' : ` [NATS ${victim.name} killed${leaseBucketToo ? ', it led the lease bucket too' : ''}; current again ${(natsMs / 1000).toFixed(1)} s after its restart]`}; ` +
    `${r.twiceAtMs.length} fired twice${r.twiceAtMs.length === 0 ? '' : ` (first at ${ms0(Math.min(...r.twiceAtMs))}..${ms0(Math.max(...r.twiceAtMs))} ms)`}, ${r.missing} never${never}; ` +
    `${loadedLate > 0 ? `batch loaded ${loadedLate.toFixed(0)} ms after its first was due; ` : ''}` +
    `${r.lost} of ${r.acked} acked writes lost; timed SETs ${sets.map((t) => `${t.reply} +${t.ms.toFixed(0)} ms`).join(', ')}; ` +
    `existing connections OK again ${resumed.map(resumedText).join(', ')}; ` +
    `${r.unanswered} writes unanswered at the writer's stop (${r.unansweredApplied} applied)` +
    `${r.errors.length === 0 ? '' : `, ${describeCounts(countOf(r.errors.map((e) => e.text)))} at +${r.errors.map((e) => e.afterMs.toFixed(0)).join('/')} ms (${r.erroredApplied} applied)`}; ` +
    `${r.exitMs === null ? '' : `old leader fired until +${r.oldFiredUntilMs?.toFixed(0)} ms, exited +${r.exitMs.toFixed(0)} ms; `}` +
    `new node ${roleOf(back)}${roundLog.size === 0 ? '' : `; logged: ${describeCounts(roundLog)}`}`);
  return r;
}

/** One node's `resumed`: first connection / every connection, ms after the stop; L: it became the leader. */
function resumedText(x: Round['resumed'][number]): string {
  const ms = (v: number | null): string => (v === null ? 'never' : `+${v.toFixed(0)}`);
  return `${ms(x.firstMs)}/${ms(x.allMs)} ms${x.newLeader ? ' (L)' : ''}`;
}

function countOf(items: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const i of items) m.set(i, (m.get(i) ?? 0) + 1);
  return m;
}

/** A phase: the rounds done, and why it ended early or was not run (null: it ran to its end). */
interface Phase {
  readonly done: Round[];
  readonly failure: string | null;
}

/** Up to `n` rounds (`more`, from the 5th on, may end them); a failed round ends the phase, the rounds before it count. */
async function rounds(ctx: Ctx, kind: Kind, n: number, more?: (done: Round[]) => boolean): Promise<Phase> {
  const done: Round[] = [];
  try {
    for (let i = 0; i < n && (more === undefined || i < NATS_ROUNDS_SHORT || more(done)); i++) done.push(await round(ctx, kind, i === 0 && kind !== 'nats'));
    return { done, failure: null };
  } catch (err) {
    const message = (err as Error)?.message ?? String(err);
    ctx.progress(`  ${kind} round ${done.length + 1} of ${n} failed: ${message}`);
    const lines = message.split('\n');
    return { done, failure: `round ${done.length + 1} of ${n} failed: ${lines[0]}${lines.length > 1 ? ` ... ${lines.slice(-3).join(' / ').slice(0, 400)}` : ''}` };
  }
}

const s = (ms: number): string => (ms / 1000).toFixed(2);
const ms0 = (ms: number): string => (Math.abs(ms) < 0.5 ? '0' : ms.toFixed(0));
const rounds_ = (n: number): string => `${n} round${n === 1 ? '' : 's'}`;
const sum = (res: readonly Round[], f: (r: Round) => number): number => res.reduce((a, r) => a + f(r), 0);

/** A SIGTERMed leader leads until its workers have drained: how long it still fired, when it exited. */
function termNote(res: readonly Round[]): string {
  const fired = spread(res.flatMap((r) => (r.oldFiredUntilMs === null ? [] : [r.oldFiredUntilMs])));
  const exit = spread(res.flatMap((r) => (r.exitMs === null ? [] : [r.exitMs])));
  return `; the old leader's last firing (its tick) p50 ${s(fired.p50)}, max ${s(fired.max)} s after the SIGTERM, its exit p50 ${s(exit.p50)}, max ${s(exit.max)} s after it`;
}

/** p50 and max of the failover time, and the notes that go with them. */
function failoverFigures(kind: Kind, phase: Phase, extra: string): Figure[] {
  const what = kind === 'term' ? 'handover' : 'failover';
  const res = phase.done;
  if (res.length === 0) return [{ label: `${what}: ${KIND_TEXT[kind]}`, value: null, unit: 's', note: phase.failure ?? 'no rounds' }];
  const f = spread(res.map((r) => r.failoverMs));
  const lease = spread(res.map((r) => r.leaseMs));
  const sets = res.flatMap((r) => r.sets);
  const setOk = spread(sets.filter((t) => t.reply === 'OK').map((t) => t.ms));
  const setErr = sets.filter((t) => t.reply !== 'OK');
  return [
    { label: `${what} p50: ${KIND_TEXT[kind]} -> new leader's first fire, TTL ${TTL}`, value: f.p50 / 1000, unit: 's', digits: 2,
      note: `${rounds_(res.length)}${phase.failure === null ? '' : ` (then ${phase.failure})`}${extra}; stop -> the new leader's "role changed: leader" line: p50 ${s(lease.p50)}, max ${s(lease.max)} s; ` +
        `a SET sent on a new connection to each surviving node 50 ms after the stop was ${setOk.n === 0 ? 'never answered OK' : `answered OK after p50 ${s(setOk.p50)}, max ${s(setOk.max)} s`}` +
        `${setErr.length === 0 ? '' : ` (${setErr.length} of ${sets.length} answered otherwise: ${describeCounts(countOf(setErr.map((t) => t.reply)))} after ${setErr.map((t) => s(t.ms)).join(', ')} s)`}; ` +
        `due jobs never fired: ${sum(res, (r) => r.missing)} of ${sum(res, (r) => r.due)}${kind === 'term' ? termNote(res) : ''}` },
    { label: `  ${what} max, same rounds`, value: f.max / 1000, unit: 's', digits: 2, note: `all rounds, ms: ${res.map((r) => r.failoverMs.toFixed(0)).join(', ')}` },
    resumedFigure(kind, res),
  ];
}

/**
 * Per surviving node, the stop -> the first SET acknowledged on a connection it had before the
 * stop (written after the old leader stopped leading): max over nodes and rounds. Target for
 * the leader's SIGKILL: TTL + 1 s.
 */
function resumedFigure(kind: Kind, res: readonly Round[]): Figure {
  const all = res.flatMap((r) => r.resumed);
  const firsts = all.flatMap((x) => (x.firstMs === null ? [] : [x.firstMs]));
  const never = all.length - firsts.length;
  const f = spread(firsts);
  const every = spread(all.flatMap((x) => (x.allMs === null ? [] : [x.allMs])));
  return {
    label: `  ${kind === 'term' ? 'handover' : 'failover'}: stop -> a surviving node's first SET acknowledged on an existing connection, max`,
    value: never > 0 || firsts.length === 0 ? null : f.max / 1000, unit: 's', digits: 2,
    ...(kind === 'kill' ? { target: { op: '<=', value: TTL_S + 1 } } : {}),
    note: `per surviving node (${WRITERS_PER_FOLLOWER} closed-loop conn each, opened before the stop; a SET written after the old leader ` +
      `${kind === 'term' ? 'stepped down' : 'exited'}): p50 ${s(f.p50)} s; on every one of its connections p50 ${s(every.p50)}, max ${s(every.max)} s` +
      `${never === 0 ? '' : `; ${never} of ${all.length} nodes acknowledged none within ${RESUME_WAIT_MS / 1000} s`}; ` +
      `per round, first/every connection (L: the new leader): ${res.map((r) => r.resumed.map(resumedText).join(' ')).join('; ')}`,
  };
}

function duplicateFigures(kind: Kind, { done: res }: Phase): Figure[] {
  if (res.length === 0) return [];
  const twice = res.map((r) => r.twiceAtMs.length);
  const at = res.flatMap((r) => r.twiceAtMs);
  return [
    { label: `  due jobs fired twice per round, mean, ${KIND_TEXT[kind]}`, value: sum(res, (r) => r.twiceAtMs.length) / res.length, unit: 'jobs', digits: 1,
      note: `per round: ${twice.join(', ')} (of ${res[0]!.due} due every ${DUE_SPACING_MS} ms)` +
        `${at.length === 0 ? '' : `; their first firing reached the sink ${ms0(Math.min(...at))} to ${ms0(Math.max(...at))} ms after the stop (negative: before); the new leader runs again what was left triggered (at-least-once)`}` },
    { label: `  due jobs fired twice per round, max`, value: Math.max(...twice), unit: 'jobs' },
  ];
}

function lostFigure(kind: Kind, { done: res }: Phase): Figure[] {
  if (res.length === 0) return [];
  const waited = res.filter((_, i) => i === 0 && kind !== 'nats').flatMap((r) => r.errors);
  const unanswered = sum(res, (r) => r.unanswered);
  return [{
    label: `acknowledged writes lost, ${KIND_TEXT[kind]}, ${rounds_(res.length)}`, value: sum(res, (r) => r.lost), unit: 'writes', target: { op: '<=', value: 0 },
    note: `${sum(res, (r) => r.acked)} SETs answered OK through the followers (${2 * WRITERS_PER_FOLLOWER} closed-loop conn, and the timed SETs) across the stops, each looked for at its execution by a QUERY through the new leader. ` +
      `${unanswered} writes were still unanswered when the writer stopped (${sum(res, (r) => r.unansweredApplied)} of them applied)` +
      `${kind === 'nats' ? '' : `; in the first round the writer waited for them: ${waited.length === 0 ? 'no ERROR' : `${describeCounts(countOf(waited.map((e) => e.text)))} ${s(Math.min(...waited.map((e) => e.afterMs)))}-${s(Math.max(...waited.map((e) => e.afterMs)))} s after the stop (${res[0]!.erroredApplied} of them applied nonetheless)`}`}`,
  }];
}

async function run(opts: RowOptions): Promise<Figure[]> {
  const bin = natsServerPath();
  if (bin === null) return [{ label: 'cluster failover', value: null, unit: '', note: 'nats-server is missing' }];
  const started = performance.now();
  const sink = await HttpSink.start();
  const nodes: Daemon[] = [];
  let nats: NatsCluster | null = null;
  try {
    const single = await withDaemon('cluster-failover-single', { workers: 1, config: { ...DEBUG, database: { persistence: 'memory', framerate: 512 } } },
      (d) => probeLateness(d, sink, 'single', WARMUP_PROBES, PROBES, PROBE_SPACING_MS, PROBE_LEAD_MS));
    opts.progress(`  single node: lateness p99 ${single.fired.p99.toFixed(2)} ms (sink ${single.arrived.p99.toFixed(2)} ms)`);
    nats = await startNats(bin, 3);
    nodes.push(...await Promise.all(['a', 'b', 'c'].map((n) => startNode(nats!, { cluster: CLUSTER, name: `node-${n}`, ttl: TTL, config: DEBUG }))));
    const nc = await connectNats(nats.urls, { reconnectTimeWait: 250, maxReconnectAttempts: -1 });
    const ctx: Ctx = { nats, jsm: await jetstreamManager(nc, { timeout: 5_000 }), sink, nodes, rand: prng(20261124), progress: opts.progress, logged: new Map(), serial: 0 };
    const leader = await waitForLeader(nodes);
    const clustered = await probeLateness(leader, sink, 'leader', WARMUP_PROBES, PROBES, PROBE_SPACING_MS, PROBE_LEAD_MS);
    opts.progress(`  cluster leader: lateness p99 ${clustered.fired.p99.toFixed(2)} ms (sink ${clustered.arrived.p99.toFixed(2)} ms)`);
    const follower = nodes.find((d) => d !== leader)!;
    const viaFollower = await closedLoopRate(follower.tcp, THROUGHPUT_CONNECTIONS, 5);
    const viaLeader = await closedLoopRate(leader.tcp, THROUGHPUT_CONNECTIONS, 5);
    opts.progress(`  SET/s through a follower ${viaFollower.perSecond.toFixed(0)}, through the leader ${viaLeader.perSecond.toFixed(0)}`);
    const changed = (await waitForLeader(live(ctx))) !== leader;
    await command(leader.tcp, `RULE SET forule fo. http POST ${sink.url}`);

    const skipped: Phase = { done: [], failure: 'skipped: an earlier phase failed' };
    const kills = await rounds(ctx, 'kill', KILL_ROUNDS);
    const terms = kills.failure !== null ? skipped : await rounds(ctx, 'term', TERM_ROUNDS);
    // The leader+NATS rounds: 10, or fewer (at least 5) when 10 would take the row past its budget.
    let short = false;
    const natsRounds = terms.failure !== null ? skipped : await rounds(ctx, 'nats', NATS_ROUNDS, (done) => {
      const mean = done.reduce((a, r) => a + r.msTaken, 0) / done.length;
      short = performance.now() - started + (NATS_ROUNDS - done.length) * mean > BUDGET_MS;
      return !short;
    });
    const logNote = (kind: Kind): string => {
      const m = ctx.logged.get(kind);
      return m === undefined || m.size === 0 ? '' : `; the nodes' warnings and errors in these rounds: ${describeCounts(m)}`;
    };
    const latFig = (what: string, l: Lateness, note: string): Figure => ({
      label: `firing lateness p99, ${what}, ${PROBES} probes ${PROBE_SPACING_MS} ms apart, 512 Hz`, value: l.fired.p99, unit: 'ms', digits: 2,
      note: `p50 ${l.fired.p50.toFixed(2)}, max ${l.fired.max.toFixed(2)} ms ("job fired" lines, as in the lateness row); at the sink p99 ${l.arrived.p99.toFixed(2)}, max ${l.arrived.max.toFixed(2)} ms; ` +
        `${l.fired.n} fired; scheduling them took ${l.scheduleMs.toFixed(0)} ms (the first due ${PROBE_LEAD_MS} ms after it began)${note}`,
    });
    return [
      ...failoverFigures('kill', kills, logNote('kill')),
      ...failoverFigures('nats', natsRounds, `${short ? ` (not ${NATS_ROUNDS}: that many would have taken the row past ${BUDGET_MS / 60_000} min)` : ''}; ` +
        `the killed NATS server also led the lease bucket in ${natsRounds.done.filter((r) => r.leaseBucketToo === true).length}; ` +
        `it was restarted after each round, the next round began once the stream's and the lease bucket's replicas were current again${logNote('nats')}`),
      ...failoverFigures('term', terms, logNote('term')),
      ...duplicateFigures('kill', kills),
      ...duplicateFigures('nats', natsRounds),
      ...duplicateFigures('term', terms),
      ...lostFigure('kill', kills),
      ...lostFigure('nats', natsRounds),
      ...lostFigure('term', terms),
      { label: `durable SET/s through a follower, ${THROUGHPUT_CONNECTIONS} closed-loop conn, 5 s`, value: viaFollower.perSecond, unit: 'SET/s',
        note: `ratio follower/leader ${(viaFollower.perSecond / viaLeader.perSecond).toFixed(2)}; 3-server NATS, R3 stream; ${viaFollower.errors + viaLeader.errors} ERROR replies${changed ? '; the leader changed during these runs' : ''}` },
      { label: `  same load through the leader (same run)`, value: viaLeader.perSecond, unit: 'SET/s' },
      latFig('leader of the 3-node cluster', clustered, '; probes SET through the leader itself'),
      latFig('single node, memory mode', single, '; measured just before the cluster started'),
    ];
  } finally {
    await Promise.all(nodes.map((d) => stopDaemon(d, 10_000)));
    await closeNatsClients();
    await nats?.stop();
    await sink.close();
  }
}

export const row: Row = {
  name: 'cluster-failover',
  title: "cluster failover: time to the new leader's first fire, handover, duplicates, lost writes, SET/s via follower vs leader, lateness",
  run,
};
