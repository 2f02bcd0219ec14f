// One tickd node of a cluster. Its roles, state diagram and invariants, and a map of cluster
// mode file by file, are in lib/leadership/README.md; tickd(8) CLUSTER MODE says what it does.
import { randomBytes } from 'node:crypto';
import type { ClusterView, NodeRole, PlacementView } from '../domain/cluster-view.ts';
import { FORMAT_VERSION } from '../domain/format.ts';
import type { Command, Reply } from '../domain/command.ts';
import { applyRecord, type LogRecord } from '../engine/journal.ts';
import { LeaseWatch } from './lease-watch.ts';
import { QuarantineBook } from './quarantine-book.ts';
import { copyRecord, restoreAfterFence, restoreAtTakeOver, type CopyParts } from './restore-from-copy.ts';
import type { Logger } from '../log.ts';
import { CommandServer } from '../jetstream/command-server.ts';
import { ForwardClient } from '../jetstream/forward-client.ts';
import { forwardingSubject } from '../jetstream/forwarding.ts';
import { PUBLISH_DEADLINE_MS, StreamJournal } from '../jetstream/journal.ts';
import { REPORT_MS } from '../jetstream/members.ts';
import { replayStream } from '../jetstream/replay.ts';
import { identifierOf } from '../jetstream/restore.ts';
import { StreamTooNewError } from '../jetstream/quarantine.ts';
import { StreamTail } from '../jetstream/tail.ts';
import { isLeaseAborted, Lease } from '../lease/lease.ts';
import { describeHolder } from '../lease/value.ts';
import { CheckpointSchedule } from './checkpoint-schedule.ts';
import type { NodeParts, RoleHooks } from './node-parts.ts';
import { FormatMark } from './format-mark.ts';
import { LeaderJournal } from './leader-journal.ts';
import { answerLocally } from './local-ops.ts';
import { errorText } from '../errors.ts';

const RETRY_PAUSE_MS = 500;
/** How long a node holding the lease may take to apply the rest of the stream. */
const CATCH_UP_MS = 10_000;
/** How often a leader deletes what was quarantined and looks whether a checkpoint is due (as often as it reports itself). */
const TIDY_MS = REPORT_MS;

export class ClusterNode {
  readonly journal = new LeaderJournal();
  private readonly p: NodeParts;
  private readonly log: Logger;
  private readonly forwarder: ForwardClient;
  private hooks: RoleHooks | null = null;
  private roleNow: NodeRole = 'follower';
  private tail: StreamTail | null = null;
  private lease: Lease | null = null;
  private stream: StreamJournal | null = null;
  private server: CommandServer | null = null;
  /** Ends the current tenure's lead() (set while leading). */
  private tenureEnded: ((why: string) => void) | null = null;
  private checkpointTimer: NodeJS.Timeout | undefined;
  /** The lease being waited for, closed by a stop. */
  private candidate: Lease | null = null;
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private reporter: NodeJS.Timeout | undefined;
  private lastSeq = 0;
  private leaderName: string | null = null;
  /** Who holds the lease, as heard (lease-watch.ts): a new holder ends the waits for the old one's answers. */
  private readonly leaseWatch: LeaseWatch;
  private readonly checkpoints: CheckpointSchedule;
  /** Stream messages that are no record of the cluster's, kept out of the copy (quarantine.ts). */
  private readonly quarantine: QuarantineBook;
  /** A record too new for this code, met in the stream: the copy stops before it, and the node never leads. */
  private tooNew: StreamTooNewError | null = null;
  /** The cluster's active format as the stream records it (format-mark.ts). */
  readonly format = new FormatMark();
  /** The leader's execution placement, for its view (lib/placement/); none: not shown. */
  placementView: (() => PlacementView) | null = null;
  private readonly stopped = Promise.withResolvers<void>();

  constructor(parts: NodeParts) {
    this.p = parts;
    this.log = parts.log;
    this.checkpoints = new CheckpointSchedule({ run: parts.checkpoints, cluster: parts.opts, log: parts.log });
    this.leaseWatch = new LeaseWatch(parts.leaseKv, parts.log, () => this.forwarder.leaderChanged(), (holder) => this.forwarder.heard(holder));
    this.quarantine = new QuarantineBook({
      keys: parts.keys, log: parts.log, counted: () => this.hooks?.quarantined?.(),
      identifierOf: (subject) => identifierOf(parts.subjects, subject), owe: (kind, id) => copyRecord(parts, kind, id),
    });
    this.forwarder = new ForwardClient({
      nc: parts.nc, subject: forwardingSubject(parts.opts.name), log: parts.log, cluster: parts.opts.name, keys: parts.keys,
      noLeaderWaitMs: 2 * parts.opts.leaseTtlMs + 2_000,
      answerWaitMs: PUBLISH_DEADLINE_MS + 5_000,
    });
  }

  get role(): NodeRole {
    return this.roleNow;
  }

  /** Whether the tick may fire now: leading, the lease held by our clock, writes going through. */
  get firing(): boolean {
    return this.roleNow === 'leader' && this.lease?.held === true && this.stream?.writable === true;
  }

  /** The last stream sequence in this node's copy (a leader's: the last it wrote). */
  get applied(): number {
    return this.stream?.lastSeq ?? this.tail?.applied ?? 0;
  }

  /** A batch from this node's workers: run here while leading, else forwarded to the leader. */
  submit(cmds: readonly Command[], done: (replies: Reply[]) => void): void {
    answerLocally(cmds, () => ({ ok: true, kind: 'cluster', cluster: this.view() }), (rest, answer) => {
      if (this.roleNow === 'leader' && this.lease?.held === true) this.hooks!.local(rest, answer);
      else this.forwarder.forward(rest, answer);
    }, done);
  }

  /** Null when the cluster may write records that need format `needs`; else why not (format-mark.ts gate). */
  refusesFormat(needs: number): string | null {
    return this.format.gate(needs, this.p.members);
  }

  view(): ClusterView {
    const applied = this.applied;
    const lastSeq = Math.max(this.lastSeq, applied);
    return {
      cluster: this.p.opts.name, node: this.p.opts.nodeName, role: this.roleNow,
      leader: this.roleNow === 'leader' ? this.p.opts.nodeName : this.leaderName,
      lastSeq, appliedSeq: applied, nodes: this.p.members.list(lastSeq),
      format: FORMAT_VERSION, activeFormat: this.format.recorded,
      upgradeNeeded: this.tooNew === null ? null : { format: this.tooNew.format, seq: this.tooNew.seq, subject: this.tooNew.subject },
      ...(this.roleNow === 'leader' && this.placementView !== null ? { placement: this.placementView() } : {}),
    };
  }

  /** What execution placement (lib/placement/) works over: this node's NATS connection, the cluster's keys, its members. */
  get links(): Pick<NodeParts, 'nc' | 'keys' | 'members' | 'opts'> {
    return this.p;
  }

  /** Builds the copy from the stream (its checkpoint, then the rest) and starts following it (start-up, and after a step-down). */
  async rebuild(): Promise<void> {
    const { nc, js, jsm, subjects, jobs, rules, schedules } = this.p;
    await this.tail?.stop();
    this.tail = null;
    const empty = (): void => {
      jobs.clear();
      rules.clear();
      schedules.clear();
    };
    empty();
    // Said before reading: the leader then deletes no removal this copy may still need.
    this.reporter ??= setInterval(() => void this.report(), REPORT_MS).unref();
    this.p.members.rebuilding();
    if (!(await this.p.members.store(this.roleNow, 0, this.quarantine.claims()))) throw new Error('this node could not report itself to the cluster before reading the stream');
    const apply = (rec: LogRecord, seq: number): void => {
      this.quarantine.verified();
      this.quarantine.written(subjects.of(rec), seq);
      this.format.seen(rec);
      applyRecord(jobs, rules, rec, schedules);
    };
    this.quarantine.rebuilding();
    this.format.rebuilding();
    let replay: Awaited<ReturnType<typeof replayStream>>;
    try {
      replay = await replayStream(nc, jsm, subjects, this.quarantine, apply, empty);
    } catch (err) {
      if (!(err instanceof StreamTooNewError)) throw err;
      this.mustUpgrade(err); // the copy keeps what came before the record
      return;
    }
    this.quarantine.following();
    this.checkpoints.known(replay.checkpointSeq);
    if (replay.checkpointError !== null) this.log.warn({ err: replay.checkpointError }, 'the checkpoint could not be read: the whole stream was');
    this.log.info({ records: replay.records, lastSeq: replay.lastSeq, checkpointSeq: replay.checkpointSeq }, 'stream replayed');
    // Written to meanwhile, the tail reads first what came during the replay (tail.ts reachedEnd).
    const atEnd = (await jsm.streams.info(subjects.stream)).state.last_seq <= replay.lastSeq;
    this.tail = new StreamTail({
      js, jsm, stream: subjects.stream, afterSeq: replay.lastSeq, atEnd, apply, trust: this.quarantine, log: this.log, tooNew: (err) => this.mustUpgrade(err),
    });
  }

  /** rebuild() until it works (NATS may be unreachable for a while), or the node stops. */
  private async rebuildUntilDone(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.rebuild();
        return;
      } catch (err) {
        if (this.stopping) return;
        this.log.warn({ err: errorText(err) }, 'reading the stream failed; trying again');
        await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
      }
    }
  }

  /** Starts taking part: reports to the cluster and competes for the lease. */
  start(hooks: RoleHooks): void {
    this.hooks = hooks;
    this.reporter ??= setInterval(() => void this.report(), REPORT_MS).unref();
    void this.report();
    this.leaseWatch.start();
    this.loop = this.run().catch((err: unknown) => this.log.error({ err }, 'the cluster role loop failed'));
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      if (this.tail === null && this.tooNew === null) await this.rebuildUntilDone();
      if (this.stopping) return;
      if (this.tooNew !== null) return await this.stopped.promise; // serves its copy, never leads
      const why = await this.lead();
      if (why === null) continue;
      await this.afterStepDown();
    }
  }

  /** Takes the lease, catches up and leads until leadership ends; null when it never began. */
  private async lead(): Promise<string | null> {
    const { opts, js, jsm, subjects } = this.p;
    let ended: (why: string) => void = () => {};
    const over = new Promise<string>((resolve) => { ended = resolve; });
    const holder = `${opts.nodeName}/${process.pid}/${randomBytes(4).toString('hex')}`;
    // A loss before the tenure is set up (while the tail stops) is kept and acted on after.
    let lostWhy: string | null = null;
    const lease = new Lease({
      kv: this.p.leaseKv, holder, ttlMs: opts.leaseTtlMs, log: this.log,
      onLost: (why) => { lostWhy = `lease lost: ${why}`; this.stepDown(lostWhy); },
    });
    this.candidate = lease;
    try {
      await lease.acquire(() => this.stopping);
      // Whoever led before can no longer write: what this node forwarded to it and is still
      // waiting for is answered now (its clients' connections go on).
      this.forwarder.leaderChanged();
      const { state } = await jsm.streams.info(subjects.stream);
      // Bounded: a tail stalled on a lost server must not hold the lease, and so the
      // cluster, without a leader. A timeout gives the lease back and rebuilds the copy.
      const giveUpAt = performance.now() + CATCH_UP_MS;
      await this.tail!.caughtUp(state.last_seq, () => !lease.held || this.stopping || performance.now() > giveUpAt);
      if (!lease.held || this.stopping) throw new Error('the lease ran out while catching up');
      if (this.p.members.outOfView) throw new Error('this node was out of the cluster\'s view for a while, so a removal it needed may be gone: its copy is rebuilt first');
      await this.tail!.stop();
      let afterSeq = Math.max(state.last_seq, this.tail!.applied);
      this.tail = null;
      // What foreign messages pushed out while this node followed is put back before it writes.
      afterSeq = await restoreAtTakeOver(this.copyParts(), holder, lease, afterSeq, this.p.members.othersOwe());
      this.lease = lease;
      this.tenureEnded = ended;
      this.stream = new StreamJournal({
        js, jsm, subjects, lastSeq: afterSeq, writerId: holder, log: this.log, appliedByOthers: () => this.p.members.appliedByOthers(),
        onFenced: (why) => this.stepDown(why), mayWrite: () => lease.held, keys: this.p.keys, written: (subject, seq) => this.quarantine.written(subject, seq),
      });
      this.journal.use(this.stream);
      this.server = new CommandServer({
        nc: this.p.nc, subject: forwardingSubject(opts.name), cluster: opts.name, keys: this.p.keys, holder, run: this.hooks!.local, log: this.log,
      });
      this.roleNow = 'leader';
      this.log.info({ role: 'leader', cause: 'took the lease', lastSeq: afterSeq }, 'role changed: leader');
      this.checkpoints.leading();
      this.checkpointTimer = setInterval(() => this.tidyWhileLeading(), TIDY_MS).unref();
      this.hooks!.promoted();
      void this.report();
      if (lostWhy !== null || !lease.held) this.stepDown(lostWhy ?? 'lease lost: expired by our own clock');
      return await over;
    } catch (err) {
      await lease.release(); // never rejects; deletes the key only while it is ours
      if (this.stopping || isLeaseAborted(err)) return null;
      this.log.warn({ err: errorText(err) }, 'taking over failed; staying a follower');
      if (this.tail !== null && this.roleNow === 'follower') {
        await this.tail.stop(); // it may be stuck: the loop rebuilds the copy
        this.tail = null;
      }
      await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
      return null;
    }
  }

  /**
   * The step-down, wherever it comes from (the lease lost, a write fenced, a stop): synchronous,
   * so nothing fires or is written after it. The tenure's lead() then returns and
   * afterStepDown() settles the rest. Nothing to do when not leading.
   */
  stepDown(why: string): void {
    if (this.roleNow !== 'leader') return;
    const ended = this.tenureEnded!;
    this.roleNow = 'follower';
    this.tenureEnded = null;
    clearInterval(this.checkpointTimer);
    this.server?.stop();
    this.server = null;
    this.stream?.fence(why);
    this.journal.use(null);
    this.hooks?.steppingDown?.();
    this.log[why === 'stopping' ? 'info' : 'warn']({ role: 'follower', cause: why }, 'role changed: follower');
    ended(why);
  }

  /**
   * A record only a newer tickd reads was met in the stream (tickd(8) UPGRADING): it is never
   * dropped, so nothing after it can be applied here. The node steps down if it leads, stops
   * competing for the lease, and serves the copy it has, saying so in its log and view.
   */
  private mustUpgrade(err: StreamTooNewError): void {
    if (this.tooNew !== null) return;
    this.tooNew = err;
    this.log.error({ format: err.format, seq: err.seq, subject: err.subject, reads: FORMAT_VERSION },
      `this node must be upgraded: ${err.message}; it applies nothing after it, will not lead, and serves what it has`);
    this.stepDown('a record too new for this node');
    if (this.roleNow !== 'leader') this.candidate?.close();
  }

  /** What follows a step-down: the last writes settle, the lease goes back, the copy is dropped. */
  private async afterStepDown(): Promise<void> {
    const stream = this.stream;
    const lease = this.lease;
    // Writes already on their way settle first (acknowledged or rolled back), then the lease
    // goes back if it is still ours, so another node need not wait for its TTL.
    await stream?.close();
    this.stream = null;
    this.lease = null;
    // Fenced by someone else's write: while the lease is still ours and the copy is the
    // acknowledged state, what a foreign message pushed out is put back (restore.ts).
    if (stream !== null && lease !== null) {
      await restoreAfterFence(this.copyParts(), stream, lease, this.stopping);
      void this.report(); // what it could not put back, to whoever leads next
    }
    await lease?.release();
    await stream?.closeRemovals(this.stopping);
    this.hooks!.demoted();
    await this.tail?.stop();
    this.tail = null; // the loop rebuilds the copy before competing again
  }

  private copyParts(): CopyParts {
    return { ...this.p, book: this.quarantine };
  }

  private async report(): Promise<void> {
    // First, and alone: how long ago this node last said so decides whether its copy can be
    // trusted (members.ts), so a slow answer below must not hold it back.
    this.p.members.report(this.roleNow, this.applied, this.quarantine.claims());
    this.format.observe(this.p.members);
    try {
      const { state } = await this.p.jsm.streams.info(this.p.subjects.stream);
      this.lastSeq = state.last_seq;
      this.stream?.checkForeignWrites(state.last_seq); // an idle leader learns of a foreign write here
      const entry = await this.p.leaseKv.get('leader');
      if (entry !== null) this.leaseWatch.saw(entry);
      this.leaderName = entry === null || entry.operation !== 'PUT' ? null : describeHolder(entry).node ?? null;
    } catch { /* NATS unreachable: the view says what was last known */ }
  }

  /** While leading: quarantined messages deleted, and the cluster's checkpoint made when enough was written since the last (checkpoint-schedule.ts). */
  private tidyWhileLeading(): void {
    const stream = this.stream;
    if (this.roleNow !== 'leader' || stream === null) return;
    this.quarantine.clear(this.p.jsm, this.p.subjects.stream);
    this.format.consider(this.p.members, (rec) => stream.writeAside(rec), this.log);
    this.checkpoints.consider(stream.lastSeq, this.p.jobs.size + this.p.rules.size, (m) => this.stream?.holdRemovals(m.removals));
  }

  /** Stops the reports started by rebuild() (a start-up that failed after it). */
  stopReporting(): void {
    clearInterval(this.reporter);
    this.reporter = undefined;
  }

  /**
   * The first step of a graceful stop: stops leading now (the lease released after the last
   * write) and competing, so a follower takes over at once; commands still arriving from this
   * node's clients are forwarded to it meanwhile.
   */
  async handOver(): Promise<void> {
    this.stopping = true;
    this.stopped.resolve();
    this.stepDown('stopping');
    if (this.roleNow !== 'leader') this.candidate?.close();
    await this.loop;
  }

  /** The last step of a graceful stop: hands over if not done yet, stops following and reporting. */
  async close(): Promise<void> {
    await this.handOver();
    clearInterval(this.reporter);
    this.leaseWatch.stop();
    await this.tail?.stop();
    this.tail = null;
    await this.p.members.close();
  }
}
