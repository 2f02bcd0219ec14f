// An attempt as GET /jobs/{id} (last_attempt) and GET /jobs/{id}/attempts write it
// (lib/http/routes/jobs.ts attemptToJson): `node` only in cluster mode, where the attempt says
// which node ran it; the no_node outcome with the tags its rule required.
import { expect } from 'chai';
import type { Attempt } from '../../../../lib/domain/attempt.ts';
import { attemptToJson } from '../../../../lib/http/routes/jobs.ts';

const RAN: Attempt = {
  rule: 'dump.', runner: 'shell', startedNs: 10n, latenessNs: 1n, durationNs: 5n, outcome: { kind: 'exit', status: 0, stderr: '' },
};

describe('http/routes/jobs: an attempt as JSON', () => {
  it('a single daemon\'s attempt has no node member at all', () => {
    expect(attemptToJson(RAN)).to.not.have.property('node');
  });

  it('a cluster\'s attempt names the node that ran it, after the runner', () => {
    const json = attemptToJson({ ...RAN, node: 'n2' }) as Record<string, unknown>;
    expect(json['node']).to.equal('n2');
    expect(Object.keys(json)).to.deep.equal(['attempt', 'started_ns', 'lateness_ns', 'held_ns', 'duration_ns', 'rule', 'runner', 'node', 'success', 'summary', 'outcome']);
  });

  it('no_node: a failure, its summary and outcome naming the tags no live node had', () => {
    const json = attemptToJson({ ...RAN, durationNs: 0n, outcome: { kind: 'no_node', on: ['db', 'eu'] } }) as Record<string, unknown>;
    expect([json['success'], json['summary'], json['outcome']]).to.deep.equal([false, 'no live node has the tags db, eu', { kind: 'no_node', on: ['db', 'eu'] }]);
  });
});
