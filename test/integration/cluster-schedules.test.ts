// Schedules in cluster mode (tickd-protocol(7) SCHEDULES; tickd(8) UPGRADING): three tickd
// nodes on a 3-server NATS cluster (real processes; never the server at 4222). A schedule's
// records need format 3, so SCHEDULE SET is refused, naming why, until the cluster records
// that every node reads it; then an every-second schedule runs across the leader's `kill -9`,
// and separately across the leader stopped (SIGSTOP) for 10 s: every nominal time from the
// first occurrence to the last decided is exactly one occurrence job or one recorded skip
// (the new leader goes on from what the stream says was decided), and the runners are told
// their schedule and nominal time. A rule with options (format 4) is refused likewise until
// the cluster records format 4; then a job waiting between two attempts of its rule's retry
// policy (a record of format 4) keeps its attempt's number and next time across the leader's
// kill -9.
import { expect } from 'chai';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Daemon } from '../helpers/daemon.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { startNode, waitForLeader } from '../helpers/cluster-nodes.ts';
import { closeNatsClients, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { pause } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';
import { linesOf, listLines } from './logfile-helpers.ts';
import { expectDecidedOnce, runsOf, skipsOf } from './schedule-evidence.ts';
import { HttpApi } from './http-client.ts';
import { occurrenceId } from '../../lib/schedule/occurrence.ts';

/** The part of an occurrence's job identifier that names its nominal time. */
const occurrenceSuffix = (t: bigint): string => occurrenceId('', t);

const S = 1_000_000_000n;

describe('cluster mode: schedules across failovers', function () {
  this.timeout(180_000);
  let bin = '';
  let nats: NatsCluster | null = null;
  const nodes: Daemon[] = [];
  const clients: LineClient[] = [];
  const out = join(tempDir(), 'runs.out');
  before(function () { bin = requireNatsServer(this); });
  after(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const d of nodes.splice(0)) {
      d.proc.kill('SIGCONT');
      await d.kill();
    }
    await closeNatsClients();
    await nats?.stop();
  });

  /** A connection to a live node other than `not`: its commands are forwarded to the leader. */
  const clientOf = async (not: Daemon): Promise<LineClient> => {
    const c = await LineClient.connect(nodes.find((d) => d !== not && d.proc.exitCode === null && d.proc.signalCode === null)!.tcp);
    clients.push(c);
    return c;
  };

  it('refuses SCHEDULE SET, naming why, until the cluster records format 3', async () => {
    nats = await startNats(bin, 3);
    for (const name of ['n1', 'n2', 'n3']) nodes.push(await startNode(nats, { cluster: 'sch', name, ttl: '2s' }));
    const c = await clientOf(await waitForLeader(nodes));
    expect(await c.request('r', `RULE SET e e. shell "echo $TICKD_JOB_ID $TICKD_SCHEDULE $TICKD_NOMINAL_NS >> ${out}"`)).to.deep.equal(['r OK']);
    const first = (await c.request('s', 'SCHEDULE SET e.probe every=1h'))[0]!;
    expect(first).to.match(/^s ERROR invalid_args schedules: needs every node of the cluster at tickd format 3 or later; the cluster's active format is [12] /);
    expect(await listLines(c, 'SCHEDULE LIST')).to.deep.equal([]);
    // A rule's options are records of format 4: refused likewise, a rule without them taken.
    expect((await c.request('o', 'RULE SET lim lim. concurrency=2 shell true'))[0]).to.match(/^o ERROR invalid_args rule options: needs every node of the cluster at tickd format 4 or later; /);
    expect((await listLines(c, 'LISTRULES')).map((l) => l.split(' ')[0])).to.deep.equal(['e']);
    // The cluster records format 3 once every node has read it for 30 s.
    await waitFor(async () => (await c.request('s', 'SCHEDULE SET e.probe every=1h'))[0]!.startsWith('s OK e.probe '), 60_000, 'the cluster at format 3');
    expect((await c.request('d', 'SCHEDULE REMOVE e.probe'))[0]).to.equal('d OK');
    expect(await c.request('o', 'RULE SET lim lim. concurrency=2 shell true')).to.deep.equal(['o OK']);
  });

  for (const how of ['kill', 'stop'] as const) {
    it(`decides each nominal time of an every-second schedule once across the leader ${how === 'kill' ? 'killed (kill -9)' : 'stopped for 10 s (SIGSTOP)'}`, async () => {
      const live = nodes.filter((d) => d.proc.exitCode === null && d.proc.signalCode === null);
      const leader = await waitForLeader(live);
      const others = live.filter((d) => d !== leader);
      const c = await clientOf(leader);
      const id = `e.${how}`;
      expect((await c.request('s', `SCHEDULE SET ${id} every=1s missed=all catchup=1m keep=1000`))[0]).to.match(new RegExp(`^s OK ${id.replace('.', '\\.')} `));
      const mine = (): string[] => linesOf(out).filter((l) => l.startsWith(`${id}:`));
      await waitFor(() => mine().length >= 3, 15_000, 'three occurrences before the failover');
      if (how === 'kill') {
        await leader.kill();
      } else {
        await pause(leader.proc.pid!);
        await new Promise((r) => setTimeout(r, 10_000)); // the 10 s
      }
      await waitForLeader(others, 30_000);
      if (how === 'stop') leader.proc.kill('SIGCONT');
      const before = mine().length;
      await waitFor(() => mine().length >= before + 3, 30_000, 'three occurrences under the new leader');
      expect((await c.request('p', `SCHEDULE PAUSE ${id}`))[0]).to.match(/^p OK /);
      const pausedAt = BigInt(Date.now()) * 1_000_000n;
      const jobs = (await listLines(c, `QUERY ${id}:`)).map((l) => l.split(' ')[0]!);
      const skips = await skipsOf(c, id);

      const asJob = expectDecidedOnce(jobs, skips, S);
      // missed=all with a minute's catch-up: nothing skipped, every second an occurrence.
      expect(skips).to.deep.equal([]);
      // Each ran (at least once, as any job); the last ones may still be on their way at the pause.
      await waitFor(() => {
        const runs = runsOf(mine(), id);
        return [...asJob].every((t) => t > pausedAt - 2n * S || (runs.get(jobs.find((j) => j.endsWith(occurrenceSuffix(t)))!) ?? 0) >= 1);
      }, 10_000, 'every occurrence decided before the pause to have run');
      for (const job of runsOf(mine(), id).keys()) expect(jobs, 'a job that ran is an occurrence job').to.include(job);
    });
  }

  it('a job between two attempts keeps its count and its next time across the leader killed (kill -9)', async () => {
    const live = nodes.filter((d) => d.proc.exitCode === null && d.proc.signalCode === null);
    const leader = await waitForLeader(live);
    const other = live.find((d) => d !== leader)!;
    const c = await clientOf(leader);
    const tries = join(tempDir(), 'tries.out');
    // Attempt 1 fails, every later one succeeds; each says its number and key.
    expect(await c.request('r', `RULE SET rt rt. retry.attempts=3 retry.backoff=fixed retry.delay=4s shell "echo $TICKD_JOB_ID $TICKD_ATTEMPT $TICKD_EXECUTION_KEY >> ${tries}; test $TICKD_ATTEMPT -gt 1"`)).to.deep.equal(['r OK']);
    expect(await c.request('s', `SET rt.1 ${BigInt(Date.now()) * 1_000_000n}`)).to.deep.equal(['s OK']);
    const api = new HttpApi(other.http!);
    const job = async (): Promise<Record<string, unknown>> => JSON.parse((await api.request('GET', '/jobs/rt.1')).text) as Record<string, unknown>;
    try {
      await waitFor(async () => (await job())['retry_at'] !== undefined, 15_000, 'rt.1 waiting for attempt 2');
      const waiting = await job();
      expect(waiting).to.include({ status: 'triggered', attempt: 1 });
      await leader.kill();
      await waitForLeader(nodes.filter((d) => d !== leader && d.proc.exitCode === null && d.proc.signalCode === null), 30_000);
      await waitFor(async () => (await job())['status'] === 'executed', 30_000, 'rt.1 executed under the new leader');
      expect(await job()).to.include({ status: 'executed', attempt: 2 });
      const lines = linesOf(tries).map((l) => l.split(' '));
      expect(lines.map((l) => l[1])).to.deep.equal(['1', '2']);
      expect(lines[0]![2]).to.not.equal(lines[1]![2]);
      expect(statSync(tries).mtimeMs * 1e6 >= Number(waiting['retry_at']) - 5e6, 'attempt 2 not before its time').to.equal(true);
    } finally {
      api.close();
    }
  });
});
