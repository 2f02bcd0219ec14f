// The client against a cluster (3 nats-server + 3 tickd): a follower and the leader both serve
// it (a follower forwards to the leader), and one client given every node's address keeps
// working when the node it uses stops. Kept short: the cluster's own behaviour is tested by
// the cluster-*.test.ts files.
import { expect } from 'chai';
import { connect, type Client } from '../../lib/client/index.ts';
import { startNode, waitForLeader } from '../helpers/cluster-nodes.ts';
import type { Daemon } from '../helpers/daemon.ts';
import { requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';

const FAR = 1893466800000000000n;
const addrOf = (d: Daemon) => `${d.tcp.host}:${d.tcp.port}`;

describe('client: a cluster', function () {
  this.timeout(120_000);
  let nats: NatsCluster | null = null;
  let nodes: Daemon[] = [];
  const clients: Client[] = [];

  before(async function () {
    const bin = requireNatsServer(this);
    nats = await startNats(bin, 3);
    nodes = await Promise.all(['a', 'b', 'c'].map((n) => startNode(nats!, { cluster: 'client', name: `node-${n}` })));
    await waitForLeader(nodes);
  });
  after(async () => {
    for (const c of clients) c.destroy();
    for (const d of nodes) await d.kill();
    await nats?.stop();
  });

  it('a follower and the leader both serve the client; reads see each other\'s writes', async () => {
    const leader = await waitForLeader(nodes);
    const follower = nodes.find((d) => d !== leader)!;
    const viaLeader = await connect({ addresses: addrOf(leader) });
    const viaFollower = await connect({ addresses: addrOf(follower) });
    clients.push(viaLeader, viaFollower);
    for (const c of clients) c.on('error', () => {}); // the next test stops a node
    await viaFollower.set('cl.f', FAR);
    await viaLeader.set('cl.l', FAR + 1n);
    expect(await viaLeader.get('cl.f')).to.deep.equal({ id: 'cl.f', status: 'planned', execution: FAR });
    expect(await viaFollower.get('cl.l')).to.deep.equal({ id: 'cl.l', status: 'planned', execution: FAR + 1n });
    await viaFollower.setRule({ id: 'cl.rule', pattern: 'cl.', runner: { type: 'shell', command: 'true' } });
    expect((await viaLeader.listRules().toArray()).find((r) => r.id === 'cl.rule')).to.deep.include({ pattern: 'cl.', runner: { type: 'shell', command: 'true' } });
    expect((await viaFollower.listJobs('cl.').toArray()).map((j) => j.id).sort()).to.deep.equal(['cl.f', 'cl.l']);
    expect((await viaFollower.stat())['persistence']).to.equal('jetstream');
  });

  it('given every address, the client goes on through another node when its node stops', async () => {
    const leader = await waitForLeader(nodes);
    const follower = nodes.find((d) => d !== leader)!;
    const others = nodes.filter((d) => d !== follower);
    const c = await connect({ addresses: [follower, ...others].map(addrOf), retryStrategy: () => 50 });
    clients.push(c);
    c.on('error', () => {});
    expect(c.endpoint?.port).to.equal(follower.tcp.port);
    await c.set('cl.move', FAR);
    await follower.kill();
    expect((await c.get('cl.move'))?.execution).to.equal(FAR);
    expect(c.endpoint?.port).to.not.equal(follower.tcp.port);
  });
});
