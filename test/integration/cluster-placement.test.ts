// Cluster mode, where jobs run (issue 40; tickd(8) CLUSTER MODE "Where jobs run"): three tickd
// nodes on a 3-server NATS cluster (real processes, started here). Every node runs what the
// leader places on it; a rule's `on` picks the nodes having its tags; a job no live node can
// take waits, then fails no_node; a node that dies has its executions run again elsewhere once
// its loss is established, and only then; a leader that dies does not take the followers'
// executions with it. Each runner writes the node it ran on (NODE_MARK, from the node's
// environment) to one file, so the test reads where and how often each job ran.
import { expect } from 'chai';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Daemon } from '../helpers/daemon.ts';
import { LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { startNode, waitForLeader } from '../helpers/cluster-nodes.ts';
import { closeNatsClients, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { pause } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';

const CLUSTER = 'place';
const WAIT_S = 3;

interface Run {
  readonly what: 'start' | 'end';
  readonly node: string;
  readonly id: string;
}

type Json = Record<string, unknown>;

describe('cluster mode: where jobs run (tags, node loss, leader loss)', function () {
  this.timeout(600_000);
  let nats: NatsCluster | null = null;
  const nodes = new Map<string, Daemon>();
  const clients: LineClient[] = [];
  const ranLog = join(tempDir(), 'ran.log');

  const start = async (name: string, tags: string): Promise<Daemon> => {
    const d = await startNode(nats!, {
      cluster: CLUSTER, name, extra: ['--node-tags', tags], env: { NODE_MARK: name }, config: { cluster: { placement_wait: WAIT_S } },
    });
    nodes.set(name, d);
    return d;
  };
  const live = (): Daemon[] => [...nodes.values()].filter((d) => d.proc.exitCode === null && d.proc.signalCode === null);
  const client = async (d: Daemon): Promise<LineClient> => {
    const c = await LineClient.connect(d.tcp);
    clients.push(c);
    return c;
  };
  const http = async (d: Daemon, path: string): Promise<Json> => {
    const res = await fetch(`http://${d.http!.host}:${d.http!.port}${path}`);
    return (await res.json()) as Json;
  };
  const runs = (prefix: string): Run[] => {
    let text = '';
    try { text = readFileSync(ranLog, 'utf8'); } catch { /* nothing ran yet */ }
    return text.split('\n').filter((l) => l !== '').map((l) => {
      const [what, node, id] = l.split(' ') as ['start' | 'end', string, string];
      return { what, node, id };
    }).filter((r) => r.id.startsWith(prefix));
  };
  const startsOf = (prefix: string): Map<string, string[]> => {
    const m = new Map<string, string[]>();
    for (const r of runs(prefix)) if (r.what === 'start') m.set(r.id, [...(m.get(r.id) ?? []), r.node]);
    return m;
  };
  /** A shell rule whose runner writes where it ran, before and after `sleep` seconds. */
  const rule = async (c: LineClient, prefix: string, on: string | null, sleep: number): Promise<void> => {
    const cmd = `echo start $NODE_MARK $TICKD_JOB_ID >> ${ranLog}; sleep ${sleep}; echo end $NODE_MARK $TICKD_JOB_ID >> ${ranLog}`;
    expect(await c.request('r', `RULE SET ${prefix}rule ${prefix} ${on === null ? '' : `on=${on} `}shell "${cmd}"`, 30_000)).to.deep.equal(['r OK']);
  };
  const setJobs = async (c: LineClient, prefix: string, n: number, inMs = 300): Promise<string[]> => {
    const due = nowNs() + BigInt(inMs) * 1_000_000n;
    const ids = Array.from({ length: n }, (_, k) => `${prefix}${k}`);
    for (const id of ids) expect(await c.request('s', `SET ${id} ${due}`, 30_000)).to.deep.equal(['s OK']);
    return ids;
  };
  const statuses = async (d: Daemon, ids: readonly string[]): Promise<string[]> =>
    Promise.all(ids.map(async (id) => String((await http(d, `/jobs/${id}`))['status'])));
  const allExecuted = async (d: Daemon, ids: readonly string[], ms: number, what: string): Promise<void> =>
    waitFor(async () => (await statuses(d, ids)).every((s) => s === 'executed'), ms, what);

  before(async function () {
    const bin = requireNatsServer(this);
    appendFileSync(ranLog, '');
    nats = await startNats(bin, 3);
    // n1 first, so that it leads; the jobs tagged `w` then run on the followers only.
    const n1 = await start('n1', 'lead');
    await waitForLeader([n1]);
    await Promise.all([start('n2', 'w,x'), start('n3', 'w')]);
    await waitFor(async () => {
      const view = await http(n1, '/cluster');
      return (view['nodes'] as Json[]).filter((m) => m['executor'] !== undefined).length === 3;
    }, 20_000, 'the three nodes to say what they run');
    // A rule with tags is a record of format 6: taken once the cluster records it (every node
    // having read it for 30 s: tickd(8) UPGRADING).
    const c = await client(n1);
    await waitFor(async () => (await c.request('r', 'RULE SET probe probe. on=lead shell true', 30_000))[0] === 'r OK', 60_000, 'the cluster at format 6');
  });
  after(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const d of nodes.values()) {
      d.proc.kill('SIGCONT');
      await d.kill();
    }
    await closeNatsClients();
    await nats?.stop();
  });

  it('runs a job only on a node having every tag its rule requires, spreads the others, and says which node ran it', async () => {
    const leader = await waitForLeader(live());
    const c = await client(nodes.get('n2')!); // a follower: rules and jobs forwarded
    await rule(c, 'pa.', 'lead', 0);
    await rule(c, 'pw.', 'w', 0);
    await rule(c, 'px.', 'w,x', 0);
    await rule(c, 'pn.', null, 1);
    const ids = [
      ...await setJobs(c, 'pa.', 4), ...await setJobs(c, 'pw.', 6), ...await setJobs(c, 'px.', 4), ...await setJobs(c, 'pn.', 9, 1_000),
    ];
    await allExecuted(leader, ids, 30_000, 'every job to run');
    const where = (prefix: string): Set<string> => new Set(runs(prefix).filter((r) => r.what === 'start').map((r) => r.node));
    expect(where('pa.')).to.deep.equal(new Set(['n1']));
    expect([...where('pw.')].every((n) => n === 'n2' || n === 'n3')).to.equal(true);
    expect(where('px.')).to.deep.equal(new Set(['n2']));
    // Nine one-second jobs due at once, three nodes of equal capacity: spread over them.
    expect(where('pn.').size, 'nodes that ran the untagged jobs').to.be.at.least(2);
    for (const [id, ran] of startsOf('p')) expect(ran, `${id} ran once`).to.have.length(1);
    const job = await http(leader, '/jobs/px.0');
    expect((job['last_attempt'] as Json)['node']).to.equal('n2');
    const view = await http(leader, '/cluster');
    const n2 = (view['nodes'] as Json[]).find((m) => m['name'] === 'n2')!;
    expect((n2['executor'] as Json)['tags']).to.deep.equal(['w', 'x']);
  });

  it('a job whose tags no live node has waits and says why, then fails with outcome no_node after placement_wait', async () => {
    const leader = await waitForLeader(live());
    const c = await client(leader);
    await rule(c, 'pz.', 'nowhere', 0);
    const [id] = await setJobs(c, 'pz.', 1, 100);
    await waitFor(async () => (await http(leader, `/jobs/${id}`))['waiting_for_node'] !== undefined, 10_000, 'the job to say it waits for a node');
    const waiting = (await http(leader, `/jobs/${id}`))['waiting_for_node'] as Json;
    expect(waiting['on']).to.deep.equal(['nowhere']);
    expect(((await http(leader, '/cluster'))['placement'] as Json)['waiting']).to.equal(1);
    await waitFor(async () => (await http(leader, `/jobs/${id}`))['status'] === 'failed', (WAIT_S + 10) * 1000, 'the job to fail');
    const job = await http(leader, `/jobs/${id}`);
    expect((job['last_attempt'] as Json)['outcome']).to.deep.include({ kind: 'no_node', on: ['nowhere'] });
    expect(job['waiting_for_node']).to.equal(undefined);
    expect(runs('pz.')).to.deep.equal([]);
  });

  it('a node paused for less than the loss bound keeps its executions: nothing runs twice', async () => {
    const leader = await waitForLeader(live());
    const c = await client(leader);
    await rule(c, 'ps.', 'w', 3);
    const ids = await setJobs(c, 'ps.', 6);
    await waitFor(() => startsOf('ps.').size === 6, 20_000, 'every job to start');
    expect([...startsOf('ps.').values()].filter((ran) => ran[0] === 'n3').length, 'jobs running on the paused node').to.be.above(0);
    const n3 = nodes.get('n3')!;
    await pause(n3.proc.pid!);
    await new Promise((r) => setTimeout(r, 5_000)); // the pause itself: shorter than the 10 s loss bound
    n3.proc.kill('SIGCONT');
    await allExecuted(leader, ids, 30_000, 'every job to finish');
    for (const [id, ran] of startsOf('ps.')) expect(ran, `${id} started once`).to.have.length(1);
  });

  it('kill -9 of a node running executions: each runs again on another node, once, after its loss', async () => {
    const leader = await waitForLeader(live());
    const c = await client(leader);
    await rule(c, 'pk.', 'w', 4);
    const ids = await setJobs(c, 'pk.', 8);
    await waitFor(() => startsOf('pk.').size === 8, 20_000, 'every job to start');
    const onN3 = [...startsOf('pk.')].filter(([, ran]) => ran[0] === 'n3').map(([id]) => id);
    expect(onN3.length, 'jobs placed on n3').to.be.above(0);
    const killedAt = Date.now();
    await nodes.get('n3')!.kill();
    await allExecuted(leader, ids, 60_000, 'every job to finish');
    const starts = startsOf('pk.');
    for (const id of ids) {
      const ran = starts.get(id)!;
      if (onN3.includes(id)) expect(ran, `${id}: on n3, then once on n2`).to.deep.equal(['n3', 'n2']);
      else expect(ran, `${id}: once on n2`).to.deep.equal(['n2']);
    }
    expect(Date.now() - killedAt, 'given away only once the loss was established').to.be.above(9_000);
    expect((await http(leader, `/jobs/${onN3[0]}`))['last_attempt']).to.deep.include({ node: 'n2' });
    await start('n3', 'w'); // back for the next test
  });

  it('kill -9 of the leader while the followers run executions: their results count, none runs again', async () => {
    const leader = await waitForLeader(live());
    expect(leader).to.equal(nodes.get('n1'));
    const c = await client(leader);
    await rule(c, 'pl.', 'w', 4);
    const ids = await setJobs(c, 'pl.', 6);
    await waitFor(() => startsOf('pl.').size === 6, 20_000, 'every job to start');
    await leader.kill();
    const next = await waitForLeader(live(), 20_000);
    await allExecuted(next, ids, 30_000, 'every job to finish under the new leader');
    for (const [id, ran] of startsOf('pl.')) expect(ran, `${id} started once`).to.have.length(1);
    const ends = runs('pl.').filter((r) => r.what === 'end');
    expect(ends).to.have.length(6);
    for (const id of ids) {
      const ranOn = startsOf('pl.').get(id)![0];
      expect((await http(next, `/jobs/${id}`))['last_attempt'], id).to.deep.include({ node: ranOn });
    }
  });
});
