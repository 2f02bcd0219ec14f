// The console's pure cluster helpers (lib/http/ui/console/cluster-format.js, a browser ES
// module that Node imports as is): the nodes of a GET /cluster answer as table rows, the
// leader's line on executions waiting for a node, and what a job waits for. Answers come as
// the console reads them: parseExact turns every integer into its decimal string.
import { expect } from 'chai';

interface NodeRow {
  name: string; role: string; self: boolean; tags: string | null; running: string | null; lag: string; seen: string;
}
interface ClusterFormat {
  clusterNodeRows(view: unknown): NodeRow[];
  placementText(view: unknown): string | null;
  nodeWaitText(wait: unknown): string | null;
}

// Through a URL so the type checker does not look for declarations of a plain .js module.
const MODULE = new URL('../../../../../lib/http/ui/console/cluster-format.js', import.meta.url).href;
const FORMAT = new URL('../../../../../lib/http/ui/console/format.js', import.meta.url).href;

// GET /cluster on the leader n1 (lib/http/routes/meta.ts clusterToJson): n3 is a tickd that
// runs only its own jobs (no executor).
const LEADER_TEXT = '{"cluster":"c","node":"n1","role":"leader","leader":"n1","last_seq":40,"applied_seq":40,"nodes":['
  + '{"name":"n1","role":"leader","applied_seq":40,"lag":0,"seen_ago_ms":12,"format":6,"executor":{"tags":["db","eu"],"capacity":32,"running":3}},'
  + '{"name":"n2","role":"follower","applied_seq":37,"lag":3,"seen_ago_ms":1520,"format":6,"executor":{"tags":[],"capacity":256,"running":0}},'
  + '{"name":"n3","role":"follower","applied_seq":40,"lag":0,"seen_ago_ms":90000,"format":5}],'
  + '"format":6,"active_format":6,"upgrade_needed":null,"placement":{"waiting":2,"placed":{"n1":3}}}';

describe('http/ui/console/cluster-format.js', () => {
  let f: ClusterFormat;
  let leader: Record<string, unknown>;
  before(async () => {
    f = (await import(MODULE)) as ClusterFormat;
    leader = ((await import(FORMAT)) as { parseExact(text: string): Record<string, unknown> }).parseExact(LEADER_TEXT);
  });

  it('clusterNodeRows gives each node its role, tags, running of capacity, lag and last report', () => {
    expect(f.clusterNodeRows(leader)).to.deep.equal([
      { name: 'n1', role: 'leader', self: true, tags: 'db, eu', running: '3 of 32', lag: '0', seen: '12 ms ago' },
      { name: 'n2', role: 'follower', self: false, tags: 'none', running: '0 of 256', lag: '3', seen: '1.5 s ago' },
      { name: 'n3', role: 'follower', self: false, tags: null, running: null, lag: '0', seen: '1.5 min ago' },
    ]);
  });

  it('clusterNodeRows marks the answering node on a follower too, and drops what is not a node', () => {
    const view = { node: 'n2', nodes: [{ name: 'n1', role: 'leader', lag: '0', seen_ago_ms: '5' }, { name: 'n2', role: 'follower' }, null, { role: 'x' }] };
    const rows = f.clusterNodeRows(view);
    expect(rows.map((r) => [r.name, r.self])).to.deep.equal([['n1', false], ['n2', true]]);
    expect(rows[1]).to.include({ lag: '?', seen: '?', tags: null });
    for (const bad of [null, undefined, 'x', {}, { nodes: 'n1' }]) expect(f.clusterNodeRows(bad), String(bad)).to.deep.equal([]);
  });

  it('placementText counts the executions waiting for a node, on the leader only', () => {
    expect(f.placementText(leader)).to.equal('2 executions wait for a node having the tags their rule requires.');
    expect(f.placementText({ placement: { waiting: '1', placed: {} } })).to.equal('1 execution waits for a node having the tags its rule requires.');
    expect(f.placementText({ placement: { waiting: '0', placed: {} } })).to.equal('No execution waits for a node.');
    // A follower's answer has no placement; anything else is not one.
    for (const bad of [{ ...leader, placement: undefined }, null, {}, { placement: { waiting: 2 } }]) expect(f.placementText(bad)).to.equal(null);
  });

  it('nodeWaitText names the tags the job waits for, or nothing', () => {
    expect(f.nodeWaitText({ on: ['gpu'], since_ns: '1775822400123456789' })).to.equal('a node with the tag gpu');
    expect(f.nodeWaitText({ on: ['db', 'eu'], since_ns: '1775822400123456789' })).to.equal('a node with the tags db, eu');
    for (const bad of [undefined, null, {}, { on: [] }, { on: 'gpu' }]) expect(f.nodeWaitText(bad), JSON.stringify(bad)).to.equal(null);
  });
});
