// About 100 s; `npm run fuzz` runs it alone (TICKD_FUZZ_SEED replays a run's choices).
//
// Cluster mode under a flood of foreign messages (tickd(8) SECURITY, Quarantine): no message
// can stop the cluster, and none changes what it acknowledged. Three tickd nodes on three
// routed nats-servers serve a client on every node (SETs far ahead and due now, SETs again,
// REMOVEs, GETs of jobs that never exist: test/helpers/fuzz/client-load.ts) while a fuzzer, a
// NATS client without the cluster's secret (test/helpers/fuzz/fuzzer.ts, junk.ts), publishes a
// few thousand messages onto every subject tickd uses: random bytes, truncated and byte-flipped
// copies of real messages, real messages replayed unchanged onto their own and other subjects,
// records it would like applied (unsealed, sealed with another secret, or a record of another
// cluster that shares the secret), and batches likewise:
//
//   the stream              <name>.j.*, <name>.r.*, <name>.<anything>, live identifiers' too
//                           (each replaces a record: the leader writes it again from its copy,
//                           or the removal of an identifier its copy has not)
//   the checkpoint stream   <name>-checkpoint.head and .c.<id>.<n>, the real ones' too in the
//                           first half of the run; beside them in the second, so that the
//                           replays then read checkpoints among the junk
//   forwarding              $TICKD.<name>.forward: published and requested; the nodes' own
//                           batches copied 2 s or more later (a copy for a past tenure is
//                           answered with a sealed redirect, not run), and answered first in
//                           the leader's name (forged answers)
//   placement               $TICKD.<name>.exec.<node> and .results (lib/placement/wire.ts):
//                           published and requested; runs and results unsealed, sealed with
//                           another secret or for another cluster (addressed to a node's real
//                           process, as its report names it), the nodes' own copied 2 s or
//                           more later, truncated or flipped: each answered the empty message
//                           (but a node's results copied, which a later leader may take again:
//                           the same result of the same attempt changes nothing twice)
//   the lease bucket        <name>-lease: LEASE_JUNK foreign values of the key `leader` (each
//                           leaves the cluster without a leader until the bucket's TTL, which
//                           is --lease-ttl, expires it: the accepted denial of service), other keys
//   the nodes bucket        <name>-nodes: junk, stale and copied reports
//
// Then: no node exited or crashed, a SET is acknowledged through every node within RECOVER_MS,
// every client request was answered, every acknowledged write is there with its time through
// every node (QUERY, and GET of some) and an acknowledged REMOVE stays removed, nothing the
// fuzzer wrote is there (no job, no rule, no marker file of its shell rule; a removal record
// the leader wrote over its junk is none of its writes), no junk batch ran or was taken for a
// node's (answered with anything but the empty message), no copy of an acknowledged batch ran
// again, no client took a forged answer, every node quarantined; the same after a cold start
// of all three after SIGTERM (with more junk beside the checkpoint, which every replay must
// read) and after SIGKILL (with junk over it). One exception, documented (tickd(8) SECURITY,
// Threat model): a record pushed out of the stream while no node runs is lost, so an
// identifier whose subject the fuzzer published onto then may be absent or hold any time a
// client ever sent for it (a checkpoint's older copy), never one nobody sent.
// The JetStream API is never called destructively (no purge, no deletion: a denial of service
// outside this test). Every finding is gathered, printed with what the fuzzer did to the
// identifier, and failed at the end; the nodes' logs of a failed run are kept in the temporary
// directory (tickd-fuzz-<seed>-<start>-<node>.log).
//
// The fuzzer's choices come from a seeded PRNG, its seed printed at the start:
// TICKD_FUZZ_SEED=<seed> replays them (the timing of a cluster does not). About 100 s; `npm run
// fuzz` runs this file alone.
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Command } from '../../lib/domain/command.ts';
import { readHead } from '../../lib/jetstream/checkpoint.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { testKeys } from '../helpers/cluster-secret.ts';
import { nodeArgs, waitForLeader } from '../helpers/cluster-nodes.ts';
import { Daemon } from '../helpers/daemon.ts';
import { fuzzRngs, fuzzSeed } from '../helpers/fuzz/choices.ts';
import { Load, type Expect } from '../helpers/fuzz/client-load.ts';
import { Fuzzer } from '../helpers/fuzz/fuzzer.ts';
import { alive, checkpointsMade, crashLines, keepLogs, quarantinedLines, replayedFrom } from '../helpers/fuzz/node-logs.ts';
import { streamOnSubjects } from '../helpers/fuzz/stream-look.ts';
import { cp, FAR, NAME, NODES, subjects } from '../helpers/fuzz/target.ts';
import { closeNatsClients, connectNats, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';

const TTL = '2s';
const FUZZ_MS = 20_000;
const FUZZ_MESSAGES = 3_000;
/** Published while every node is down, before each cold start. */
const DOWN_MESSAGES = 150;
/** Foreign values of the lease key during the run (each may leave the cluster without a leader for --lease-ttl). */
const LEASE_JUNK = 3;
/** How long the cluster may take to serve a SET on every node once the fuzzing stopped. */
const RECOVER_MS = 30_000;
/** How long a node may take to start (a loaded two-core machine has taken 20 s). */
const START_MS = 60_000;
const SEED = fuzzSeed();
const RULES = ['l f. f. shell true', 'l OK'];

describe('cluster mode: a fuzzer without the secret on every subject tickd uses', function () {
  this.timeout(240_000);
  let bin = '';
  let nats: NatsCluster | null = null;
  const nodes: Daemon[] = [];
  /** Every node started, in order (three a start), for their logs. */
  const started: Daemon[] = [];
  const clients: LineClient[] = [];
  before(function () { bin = requireNatsServer(this); });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') keepLogs(SEED, started);
    started.splice(0);
    for (const c of clients.splice(0)) c.close();
    for (const d of nodes.splice(0)) await d.kill();
    await closeNatsClients();
    await nats?.stop();
    nats = null;
  });
  const client = async (d: Daemon): Promise<LineClient> => {
    const c = await LineClient.connect(d.tcp);
    clients.push(c);
    return c;
  };
  const startAll = async (): Promise<Daemon[]> => {
    // As startNode does, but each is kept before it is ready: one that never gets there is
    // stopped after the test too.
    const three = NODES.map((name) => Daemon.spawn({
      args: nodeArgs(nats!, { cluster: NAME, name, ttl: TTL, extra: ['--checkpoint-records', '200'] }), dir: tempDir(), config: { http: { listen: '127.0.0.1:0' } },
    }));
    nodes.push(...three);
    started.push(...three);
    await Promise.all(three.map((d) => d.waitForReady(START_MS)));
    return three;
  };
  /** A SET through every node, tried again until acknowledged: the cluster serves. */
  const serves = async (all: readonly Daemon[], tag: string, ms: number): Promise<string[]> => {
    const ids: string[] = [];
    await Promise.all(all.map(async (d) => {
      const name = NODES[all.indexOf(d)]!;
      const c = await client(d);
      const id = `after.${tag}.${name}`;
      ids.push(id);
      await waitFor(async () => (await c.request('s', `SET ${id} ${FAR}`, ms))[0] === 's OK', ms, `a SET through ${name} (${tag}) acknowledged`);
    }));
    return ids;
  };

  it(`survives ${FUZZ_MESSAGES} foreign messages in ${FUZZ_MS / 1000} s while serving, keeps every acknowledged write, and restarts cold`, async () => {
    console.log(`      seed ${SEED} (TICKD_FUZZ_SEED=${SEED} replays the fuzzer's choices)`);
    const rngs = fuzzRngs(SEED);
    const began = performance.now();
    nats = await startNats(bin, 3);
    let all = await startAll();
    await waitForLeader(all);
    const setup = await client(all[0]!);
    await waitFor(async () => (await setup.request('r', 'RULE SET f. f. shell true', 30_000))[0] === 'r OK', 30_000, 'the rule f. set');

    const loads = await Promise.all(all.map(async (d) => new Load(await client(d), NODES[all.indexOf(d)]!, rngs.load)));
    const acked = (): string[] => loads.flatMap((l) => l.acked);
    const ackedTime = (id: string): bigint | null => {
      for (const l of loads) {
        const e = l.expect.get(id);
        if (e !== undefined) return e.acked;
      }
      return null;
    };
    const wasAcked = (c: Command): boolean => {
      const text = c.op === 'job.set' ? `SET ${c.id} ${c.execution}` : c.op === 'job.remove' ? `REMOVE ${c.id}` : null;
      return text !== null && loads.some((l) => l.ackedCommands.has(text));
    };
    await waitFor(() => loads.every((l) => l.acked.length >= 20), 30_000, 'writes acknowledged on every node before the fuzzing');
    // A checkpoint first: every rebuild the fuzzing causes reads it, and the fuzzer copies it.
    const checkpoints = (): number => all.reduce((n, d) => n + checkpointsMade(d), 0);
    await waitFor(() => checkpoints() > 0, 60_000, 'a checkpoint made before the fuzzing');
    const checkpointsBefore = checkpoints();
    const replaysBefore = all.map((d) => replayedFrom(d).length);
    const marker = join(tempDir(), 'fuzzed-rule-ran');
    const fuzzerOf = (): Fuzzer => new Fuzzer({ urls: nats!.urls, seed: SEED, rng: rngs.fuzz, forge: rngs.forge, marker, acked, ackedTime, wasAcked });
    const fuzzer = fuzzerOf();
    await fuzzer.open(true);
    await fuzzer.refresh();
    const fuzzStart = performance.now();
    await fuzzer.run(FUZZ_MS, FUZZ_MESSAGES, LEASE_JUNK);
    await fuzzer.close();
    const fuzzMs = performance.now() - fuzzStart;
    console.log(`      fuzzed ${fuzzer.total} messages in ${Math.round(fuzzMs)} ms; ${acked().length} writes acknowledged so far (${loads.map((l) => l.acked.length).join(' + ')}); ${checkpoints() - checkpointsBefore} checkpoints made meanwhile; the nodes' copies rebuilt ${all.reduce((n, d, i) => n + replayedFrom(d).length - replaysBefore[i]!, 0)} times, ${all.reduce((n, d, i) => n + replayedFrom(d).slice(replaysBefore[i]).filter((x) => x > 0).length, 0)} of them from a checkpoint`);
    console.log(`      replies: ${loads.map((l) => JSON.stringify(Object.fromEntries(l.replies))).join(' ')}`);
    console.log(`      sent: ${JSON.stringify(Object.fromEntries([...fuzzer.counts].sort()))}`);
    console.log(`      the leader answered the fuzzer's requests: ${JSON.stringify(Object.fromEntries([...fuzzer.answers].sort()))}`);

    // No node died, and the cluster serves on every node within RECOVER_MS: without these the
    // rest cannot be looked at, so they fail at once. Every other finding is gathered, and the
    // cold starts are made whatever was found, so that one run says all it can.
    expect(all.filter((d) => !alive(d)).map((d) => `${NODES[all.indexOf(d)]} exited ${d.proc.exitCode ?? d.proc.signalCode}`), 'nodes that exited').to.deep.equal([]);
    const recovering = performance.now();
    await waitForLeader(all, RECOVER_MS);
    const after = await serves(all, 'fuzz', RECOVER_MS);
    const recoverMs = performance.now() - recovering;
    // Every request the clients sent is answered, OK or not (a forwarded one within the
    // forwarding's own bounds, which are well below this).
    const settled = await Promise.race([Promise.all(loads.map((l) => l.stop())).then(() => true), new Promise<false>((r) => { setTimeout(() => r(false), 60_000).unref(); })]);
    expect(settled, 'every client request answered within 60 s of the fuzzing').to.equal(true);
    expect(all.filter((d) => !alive(d)).length, 'nodes that exited').to.equal(0);

    const expected = new Map<string, Expect>();
    for (const l of loads) for (const [id, e] of l.expect) expected.set(id, e);
    const served = (): Expect => ({ acked: FAR, maybe: [], removed: 'no', ever: [FAR] });
    for (const id of after) expected.set(id, served());
    const sent = new Set([...loads.flatMap((l) => [...l.sent]), ...after]);
    console.log(`      served again on every node ${Math.round(recoverMs)} ms after the fuzzing; ${[...expected.values()].filter((e) => e.acked !== null).length} writes acknowledged in all`);

    /** Stream subjects the fuzzer published onto while no node ran: a record pushed out then is lost (documented). */
    const pushedOutWhileDown = new Set<string>();
    const failures: string[] = [];
    const fail = (what: string, xs: readonly string[]): void => {
      if (xs.length === 0) return;
      failures.push(`${what}: ${xs.length}`);
      console.log(`      FAILED ${what}: ${xs.length}\n        ${xs.slice(0, 6).join('\n        ')}`);
    };
    /** The cluster's state, asked through each node: every acknowledged write, nothing else; findings by kind. */
    const verify = async (when: string, live: readonly Daemon[]): Promise<void> => {
      const found = new Map<string, string[]>();
      const note = (kind: string, what: string): void => {
        const xs = found.get(kind) ?? [];
        found.set(kind, xs);
        xs.push(what);
      };
      let documented = 0;
      const lost = new Set<string>();
      for (const d of live) {
        const name = NODES[live.indexOf(d)]!;
        const c = await client(d);
        const q = await c.request('q', 'QUERY', 60_000);
        expect(q.at(-1), `QUERY through ${name} ${when}`).to.equal('q OK');
        const state = new Map(q.slice(0, -1).map((l) => {
          const [, id, , time] = l.split(' ');
          return [id!, BigInt(time!)] as const;
        }));
        for (const id of state.keys()) if (!sent.has(id)) note('jobs nobody sent', `${name}: ${id}`);
        for (const [id, e] of expected) {
          const got = state.get(id);
          const times = [...(e.acked === null ? [] : [e.acked]), ...e.maybe];
          const mayBeAbsent = e.acked === null || e.removed !== 'no';
          const onto = fuzzer.overwritten.has(subjects.job(id)) ? ', on whose subject the fuzzer published' : '';
          const copied = fuzzer.rerun.has(id) ? ', named by a copy of a batch the leader ran' : '';
          const held = got !== undefined && (e.removed === 'yes' || !times.includes(got));
          if (pushedOutWhileDown.has(subjects.job(id))) {
            // Its record may be lost: absent, or a checkpoint's older copy; never a time nobody sent.
            if (got !== undefined && !e.ever.includes(got)) note('jobs pushed out while no node ran, holding a time nobody sent', `${name}: ${id} holds ${got}`);
            else if ((got === undefined && !mayBeAbsent) || held) documented++;
          } else if (e.removed === 'yes' && got !== undefined) note(`jobs removed (acknowledged), yet there${copied}${onto}`, `${name}: ${id} ${got}`);
          else if (got === undefined && !mayBeAbsent) {
            note(`acknowledged jobs lost${onto}`, `${name}: ${id} (acknowledged at ${e.acked})`);
            lost.add(id);
          }
          else if (got !== undefined && !times.includes(got)) note(`jobs holding another time than acknowledged${copied}${onto}`, `${name}: ${id} holds ${got}, acknowledged ${e.acked}${e.maybe.length > 0 ? `, maybe ${e.maybe.join(' ')}` : ''}`);
        }
        const rules = await c.request('l', 'LISTRULES', 30_000);
        const ruleLost = pushedOutWhileDown.has(subjects.rule('f.')) && JSON.stringify(rules) === JSON.stringify(['l OK']);
        if (JSON.stringify(rules) !== JSON.stringify(RULES) && !ruleLost) {
          note(`rules other than the one acknowledged (f. f. shell true${fuzzer.overwritten.has(subjects.rule('f.')) ? ', on whose subject the fuzzer published' : ''})`, `${name}: ${JSON.stringify(rules)}`);
        }
        if (ruleLost) documented++;
        // GET too, of some acknowledged jobs.
        const sample = [...expected].filter(([id, e]) => e.acked !== null && e.removed === 'no' && e.maybe.length === 0 && !pushedOutWhileDown.has(subjects.job(id)))
          .filter((_, k) => k % 50 === 0).slice(0, 40);
        for (const [id, e] of sample) {
          const g = (await c.request('g', `GET ${id}`, 30_000))[0]!;
          if (!/^g OK \S+ \d+$/.test(g) || BigInt(g.split(' ')[3]!) !== e.acked) note('GETs of acknowledged jobs answered otherwise', `${name}: GET ${id}: ${g}, acknowledged ${e.acked}`);
        }
      }
      for (const [kind, xs] of found) fail(`${when}, through each node: ${kind}`, xs);
      if (lost.size > 0) {
        const look = await streamOnSubjects(await jetstreamManager(await connectNats(nats!.urls)), [...lost].slice(0, 12));
        console.log(`      the stream on the subjects of lost jobs ${when}:\n        ${look.join('\n        ')}`);
      }
      if (documented > 0) console.log(`      ${when}: ${documented} records (over the nodes) lost or older, pushed out while no node ran (documented, tickd(8) SECURITY)`);
    };
    const healthy = (when: string, live: readonly Daemon[]): void => {
      fail(`nodes that exited ${when}`, live.filter((d) => !alive(d)).map((d) => NODES[live.indexOf(d)]!));
      fail(`nodes that quarantined nothing ${when}`, live.filter((d) => quarantinedLines(d).length === 0).map((d) => NODES[live.indexOf(d)]!));
      fail(`crashes in the logs ${when}`, live.flatMap((d) => crashLines(d).map((l) => `${NODES[live.indexOf(d)]}: ${l.slice(0, 300)}`)));
    };

    await verify('after the fuzzing', all);
    healthy('after the fuzzing', all);
    fail('answers a client took from the fuzzer (forged in the leader\'s name)', loads.flatMap((l) => l.forged));
    fail('client anomalies (a REMOVE of an acknowledged job answered not_found, a reply out of order)', loads.flatMap((l) => l.anomalies).map((a) => {
      const id = /acknowledged (\S+):/.exec(a)?.[1];
      return id !== undefined && fuzzer.overwritten.has(subjects.job(id)) ? `${a} (the fuzzer published onto its subject)` : a;
    }));
    fail('copies of acknowledged batches the leader ran again', fuzzer.copiesRun);
    fail('foreign batches the leader ran or took for a node\'s', fuzzer.answered);
    if (fuzzer.copiesRunMaybeFirst.length > 0) console.log(`      (copies of batches no client was told had run, run by the leader: ${fuzzer.copiesRunMaybeFirst.length})`);

    // Cold starts, after SIGTERM and after SIGKILL of every node, with more junk published meanwhile.
    for (const how of ['SIGTERM', 'SIGKILL'] as const) {
      if (how === 'SIGTERM') {
        // A checkpoint of this cluster's (its head verifies) for the cold start to read.
        const jsm = await jetstreamManager(await connectNats(nats.urls));
        const { created } = await jsm.streams.info(NAME);
        // The fuzzer's junk on the head subject in the first half replaces the head (one message
        // a subject), and a checkpoint made since is due only after enough records: without one,
        // writes are made (jobs far ahead, verified with the rest) until the leader makes one.
        const filler = await client(all[0]!);
        let filled = 0;
        await waitFor(async () => {
          if ((await readHead(jsm, cp, created, testKeys).catch(() => null))?.head != null) return true;
          for (let k = 0; k < 100; k++, filled++) {
            const id = `fill.${filled}`;
            sent.add(id);
            const ok = (await filler.request('s', `SET ${id} ${FAR}`, 30_000))[0] === 's OK';
            expected.set(id, ok ? served() : { acked: null, maybe: [FAR], removed: 'no', ever: [FAR] });
          }
          return false;
        }, 90_000, 'a checkpoint to read at the cold start');
        if (filled > 0) console.log(`      no checkpoint head verified after the fuzzing: ${filled} jobs written until the leader made one`);
      }
      const stops = await Promise.all(all.map((d) => d.stop(how)));
      if (how === 'SIGTERM') fail('nodes that did not exit 0 on SIGTERM', stops.flatMap((x, i) => (x.code === 0 ? [] : [`${NODES[i]}: ${x.code ?? x.signal}`])));
      nodes.splice(0);
      const down = fuzzerOf();
      await down.open(false);
      // Before the first cold start the checkpoint is left whole (its replay reads it among the
      // junk); before the second, its head and chunks are junk too (the whole stream is read).
      await down.down(DOWN_MESSAGES, how === 'SIGTERM');
      await down.close();
      for (const subject of down.overwritten) {
        fuzzer.overwritten.add(subject);
        pushedOutWhileDown.add(subject);
      }
      const restarting = performance.now();
      all = await startAll();
      await waitForLeader(all, RECOVER_MS);
      const more = await serves(all, how, RECOVER_MS);
      for (const id of more) {
        expected.set(id, served());
        sent.add(id);
      }
      const from = all.map((d) => replayedFrom(d)[0] ?? -1);
      console.log(`      cold start after ${how} of every node (${down.overwritten.size} live subjects published onto meanwhile): serving on every node in ${Math.round(performance.now() - restarting)} ms; the replays started from checkpoint ${from.join(', ')}`);
      if (how === 'SIGTERM') fail('cold-start replays that did not read the checkpoint (left whole among the junk)', from.flatMap((x, i) => (x > 0 ? [] : [`${NODES[i]}: ${x}`])));
      await verify(`after a cold start (${how})`, all);
      healthy(`after a cold start (${how})`, all);
    }
    if (existsSync(marker)) fail('the fuzzer\'s shell rule ran', [marker]);
    console.log(`      ${Math.round((performance.now() - began) / 1000)} s in all`);
    expect(failures, `seed ${SEED}`).to.deep.equal([]);
  });
});
