import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import type { Request } from 'polka';
import type { ClusterView } from '../../../../lib/domain/cluster-view.ts';
import type { Command, Reply } from '../../../../lib/domain/command.ts';
import { STAT_KEYS, type StatValues } from '../../../../lib/domain/stat.ts';
import { buildTokenTable } from '../../../../lib/auth/verify.ts';
import { silentLogger } from '../../../../lib/log.ts';
import { createApp } from '../../../../lib/http/app.ts';
import { toJson } from '../../../../lib/http/json.ts';
import { clusterToJson, statToJson } from '../../../../lib/http/routes/meta.ts';
import type { Readiness } from '../../../../lib/http/route.ts';

const sample = (): Record<string, string | bigint> => {
  const s: Record<string, string | bigint> = {};
  for (const k of STAT_KEYS) s[k] = 0n;
  return { ...s, uptime_ns: 12345678901234567890n, persistence: 'memory', compression: 'idle', auth_enabled: '1', tls_enabled: '0', framerate: 512n };
};

describe('http/routes/meta statToJson', () => {
  it('keeps the STAT key order, exact integers, strings for persistence/compression, 0/1 numbers for the flags', () => {
    const text = toJson(statToJson(sample() as StatValues));
    expect(text).to.contain('"uptime_ns":12345678901234567890');
    expect(text).to.contain('"persistence":"memory","compression":"idle","auth_enabled":1,"tls_enabled":0,"framerate":512');
    expect(Object.keys(JSON.parse(text) as object)).to.deep.equal([...STAT_KEYS]);
  });

  it('refuses a non-integer where an integer belongs (a broken invariant, answered 500)', () => {
    expect(() => statToJson({ ...sample(), jobs_total: 'many' } as StatValues)).to.throw(/jobs_total/);
  });
});

const VIEW: ClusterView = {
  cluster: 'prod', node: 'n2', role: 'follower', leader: 'n1', lastSeq: 120, appliedSeq: 118,
  nodes: [
    { name: 'n1', role: 'leader', appliedSeq: 120, lag: 0, seenAgoMs: 350, format: 2 },
    { name: 'n2', role: 'follower', appliedSeq: 118, lag: 2, seenAgoMs: 0, format: 1 },
  ],
  format: 2, activeFormat: 1, upgradeNeeded: null,
};

interface Answer { status: number; headers: Record<string, string>; body: string }

/** One request through the whole app (routing, bearer auth, perform) without a socket. */
function request(app: ReturnType<typeof createApp>, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const answer: Answer = { status: 0, headers: {}, body: '' };
    const res = {
      finished: false,
      headersSent: false,
      writeHead(status: number, h: Record<string, string> = {}) {
        answer.status = status;
        answer.headers = h;
        this.headersSent = true;
        return this;
      },
      end(body?: string) {
        answer.body = body ?? '';
        this.finished = true;
        resolve(answer);
      },
      destroy() { resolve(answer); },
    };
    app.handle({ method: 'GET', url: path, headers } as unknown as Request, res as unknown as ServerResponse);
  });
}

describe('http/routes/meta GET /cluster (fake primary)', () => {
  const start = (reply: Reply, { auth = false, cluster = true } = {}) => {
    const seen: Command[] = [];
    const tokens = auth ? buildTokenTable([{ name: 'a', secret: 'sa', namespace: 'a.' }]) : null;
    const dispatch = (cmd: Command): Promise<Reply> => { seen.push(cmd); return Promise.resolve(reply); };
    return { seen, app: createApp({ dispatch, readiness: () => 'ready', tokens, version: '1.2.3', cluster }, silentLogger()) };
  };
  const documented = async (app: ReturnType<typeof createApp>): Promise<string[]> =>
    Object.keys((JSON.parse((await request(app, '/openapi.json')).body) as { paths: object }).paths);

  it('cluster mode: is listed in /openapi.json and answers 200 with the view under snake_case keys', async () => {
    const { seen, app } = start({ ok: true, kind: 'cluster', cluster: VIEW });
    const res = await request(app, '/cluster');
    expect(res.status).to.equal(200);
    expect(res.body).to.equal(
      '{"cluster":"prod","node":"n2","role":"follower","leader":"n1","last_seq":120,"applied_seq":118,"nodes":['
      + '{"name":"n1","role":"leader","applied_seq":120,"lag":0,"seen_ago_ms":350,"format":2},'
      + '{"name":"n2","role":"follower","applied_seq":118,"lag":2,"seen_ago_ms":0,"format":1}],'
      + '"format":2,"active_format":1,"upgrade_needed":null}');
    expect(seen).to.deep.equal([{ op: 'cluster' }]);
    expect(await documented(app)).to.include('/cluster');
  });

  it('writes a null leader while no node holds the lease', () => {
    expect(toJson(clusterToJson({ ...VIEW, leader: null, nodes: [] }))).to.contain('"leader":null,');
  });

  it('says when the node met a record too new for it', () => {
    expect(toJson(clusterToJson({ ...VIEW, upgradeNeeded: { format: 3, seq: 7, subject: 'prod.j.x' } })))
      .to.contain('"upgrade_needed":{"format":3,"seq":7,"subject":"prod.j.x"}}');
  });

  it('a node alone: no such route (the plain 404 of an unknown path, nothing dispatched) and not in /openapi.json', async () => {
    for (const auth of [false, true]) {
      const { seen, app } = start({ ok: true, kind: 'cluster', cluster: VIEW }, { auth, cluster: false });
      const res = await request(app, '/cluster', auth ? { authorization: 'Bearer sa' } : {});
      expect([res.status, res.body]).to.deep.equal([404, '{"error":"not found"}']);
      expect(seen).to.deep.equal([]);
      expect(await documented(app)).not.to.include('/cluster');
    }
  });

  it('needs a token when auth is on (any namespace will do, like /stats)', async () => {
    const { seen, app } = start({ ok: true, kind: 'cluster', cluster: VIEW }, { auth: true });
    const res = await request(app, '/cluster');
    expect([res.status, res.headers['WWW-Authenticate'], res.body]).to.deep.equal([401, 'Bearer', '{"error":"unauthorized"}']);
    expect(seen).to.deep.equal([]);
    expect((await request(app, '/cluster', { authorization: 'Bearer sa' })).status).to.equal(200);
    expect(seen).to.deep.equal([{ op: 'cluster' }]);
  });
});

describe('http/routes/meta GET /ready and GET /health', () => {
  const appIn = (readiness: () => Readiness, auth: boolean) => {
    const seen: Command[] = [];
    const tokens = auth ? buildTokenTable([{ name: 'a', secret: 'sa', namespace: 'a.' }]) : null;
    const dispatch = (cmd: Command): Promise<Reply> => { seen.push(cmd); return Promise.reject(new Error('not used')); };
    return { seen, app: createApp({ dispatch, readiness, tokens, version: '1.2.3', cluster: false }, silentLogger()) };
  };

  it('answers the phase the worker was last told, without a token and without asking the primary', async () => {
    for (const auth of [false, true]) {
      let now: Readiness = 'starting';
      const { seen, app } = appIn(() => now, auth);
      const answers: Array<[number, string]> = [];
      for (const phase of ['starting', 'ready', 'stopping'] as const) {
        now = phase;
        const res = await request(app, '/ready');
        answers.push([res.status, res.body]);
        // Liveness does not depend on the phase.
        expect([(await request(app, '/health')).status, phase]).to.deep.equal([200, phase]);
      }
      expect(answers, `auth ${auth}`).to.deep.equal([
        [503, '{"error":"not ready: starting"}'],
        [200, '{"status":"ready"}'],
        [503, '{"error":"not ready: stopping"}'],
      ]);
      expect(seen).to.deep.equal([]);
    }
  });
});
