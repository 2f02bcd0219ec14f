// The rule option `on` (issue 40; tickd-protocol(7) RETRIES AND LIMITS) in a single daemon: set
// over TCP (`on=db,eu`) and HTTP (`"on": [...]`), read back through both and through ctl, kept
// in the logfile across a kill -9, refused naming `on` when wrong; and the rule's jobs run as
// any other's here (placement is cluster mode's), their attempts with no `node` member.
import { expect } from 'chai';
import { join } from 'node:path';
import { connect } from '../../lib/client/index.ts';
import { runTickd } from '../helpers/daemon.ts';
import { nowNs, waitFor } from '../helpers/client.ts';
import { addrOf, ctl } from '../helpers/ctl.ts';
import { tempDir } from '../helpers/tmp.ts';
import { HttpApi } from './http-client.ts';
import { ApiDaemons, type ApiDaemon } from './api-daemons.ts';

type Obj = Record<string, unknown>;

describe('rule option on: the node tags a rule\'s jobs require', function () {
  this.timeout(60_000);
  const daemons = new ApiDaemons();
  afterEach(() => daemons.end());
  const start = (dir: string): Promise<ApiDaemon> => daemons.start(dir);
  const rule = async (api: HttpApi, id: string): Promise<Obj> => {
    const res = await api.json('GET', `/rules/${id}`);
    expect(res.status).to.equal(200);
    return res.body as Obj;
  };

  it('set over TCP and HTTP, read back through both and ctl, the same after a kill -9; dump prints it', async () => {
    const dir = tempDir();
    let { d, tcp, api } = await start(dir);
    expect(await tcp.request('r', 'RULE SET dump. dump. concurrency=1 on=db,eu shell "echo dump"')).to.deep.equal(['r OK']);
    const put = await api.json('PUT', '/rules/gpu.', { body: { pattern: 'gpu.', runner: { type: 'shell', command: 'echo gpu' }, on: ['gpu'] } });
    expect(put.status).to.equal(200);
    expect(put.body).to.deep.equal({ id: 'gpu.', pattern: 'gpu.', runner: { type: 'shell', command: 'echo gpu' }, on: ['gpu'] });
    expect(await api.json('PUT', '/rules/plain.', { body: { pattern: 'plain.', runner: { type: 'shell', command: 'true' } } })).to.have.property('status', 200);
    const listed = ['l dump. dump. concurrency=1 on=db,eu shell "echo dump"', 'l gpu. gpu. on=gpu shell "echo gpu"', 'l plain. plain. shell true', 'l OK'];
    const check = async (): Promise<void> => {
      expect(await tcp.request('l', 'LISTRULES')).to.deep.equal(listed);
      expect(await rule(api, 'dump.')).to.deep.equal({ id: 'dump.', pattern: 'dump.', runner: { type: 'shell', command: 'echo dump' }, concurrency: 1, on: ['db', 'eu'] });
      expect(await rule(api, 'plain.')).to.not.have.property('on');
      const all = (await api.json('GET', '/rules')).body as Obj[];
      expect(all.map((r) => r['on'] ?? null)).to.deep.equal([['db', 'eu'], ['gpu'], null]);
    };
    await check();
    const ls = await ctl(['--addr', addrOf(d.tcp), 'rule', 'ls', 'gpu.', '--json']);
    expect([ls.code, ls.stderr]).to.deep.equal([0, '']);
    expect(JSON.parse(ls.stdout)).to.deep.equal([{ id: 'gpu.', pattern: 'gpu.', runner: { type: 'shell', command: 'echo gpu' }, on: ['gpu'] }]);

    await d.kill();
    ({ d, tcp, api } = await start(dir));
    await check();
    const text = await runTickd(['dump', join(dir, 'logfile')]);
    expect(text.code).to.equal(0);
    expect(text.stdout).to.include('rule RULE SET dump. dump. concurrency=1 on=db,eu shell "echo dump"');
    const json = await runTickd(['dump', join(dir, 'logfile'), '--format', 'json']);
    expect(json.stdout).to.include('"concurrency":1,"on":["db","eu"]}');
  });

  it('ctl rule set takes on=, and the daemon stores it', async () => {
    const { d, api } = await start(tempDir());
    const set = await ctl(['--addr', addrOf(d.tcp), 'rule', 'set', 'eu.', 'eu.', 'on=eu', 'shell', 'true']);
    expect([set.code, set.stderr]).to.deep.equal([0, '']);
    expect((await rule(api, 'eu.'))['on']).to.deep.equal(['eu']);
    const bad = await ctl(['--addr', addrOf(d.tcp), 'rule', 'set', 'eu.', 'eu.', 'on=', 'shell', 'true']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/on: must name at least one node tag \(omit it to run anywhere\)/);
  });

  it('the client library writes on and reads it back beside the other options', async () => {
    const { d, api } = await start(tempDir());
    const client = await connect({ addresses: addrOf(d.tcp) });
    daemons.closeAtEnd({ close: () => { void client.close(); } });
    await client.setRule({ id: 'lib.', pattern: 'lib.', runner: { type: 'shell', command: 'true' }, concurrency: 2, on: ['db', 'eu'] });
    expect((await rule(api, 'lib.'))['on']).to.deep.equal(['db', 'eu']);
    expect(await client.listRules().toArray()).to.deep.equal([{ id: 'lib.', pattern: 'lib.', runner: { type: 'shell', command: 'true' }, concurrency: 2, on: ['db', 'eu'] }]);
  });

  it('a bad on is refused naming on, over HTTP (400) and TCP, and the rule is unchanged', async () => {
    const { tcp, api } = await start(tempDir());
    expect(await tcp.request('r', 'RULE SET keep. keep. on=db shell true')).to.deep.equal(['r OK']);
    const before = (await api.request('GET', '/rules/keep.')).text;
    for (const [on, why] of [
      [[], /^on: must name at least one node tag \(omit it to run anywhere\)$/], ['db', /^on: must be a list of tags$/],
      [['db', 'db'], /^on: "db" is given twice$/], [['-x'], /^on: a tag is 1 to 64 characters .*, got "-x"$/],
      [Array.from({ length: 17 }, (_, i) => `t${i}`), /^on: at most 16 tags$/],
    ] as const) {
      const res = await api.json('PUT', '/rules/keep.', { body: { pattern: 'other.', runner: { type: 'shell', command: 'true' }, on } });
      expect(res.status, JSON.stringify(on)).to.equal(400);
      expect((res.body as { error: string }).error).to.match(why);
    }
    for (const [value, why] of [['', /^on: must name at least one node tag/], ['db,,eu', /^on: a tag is .*, got ""$/], ['a/b', /^on: a tag is .*, got "a\/b"$/]] as const) {
      const [line] = await tcp.request('x', `RULE SET keep. k. on=${value} shell true`);
      expect(line!.slice('x ERROR invalid_args '.length), value).to.match(why);
      expect(line!.startsWith('x ERROR invalid_args ')).to.equal(true);
    }
    expect((await tcp.request('x', 'RULE SET keep. k. on=db on=eu shell true'))[0]).to.equal('x ERROR invalid_args on: given twice');
    expect((await api.request('GET', '/rules/keep.')).text).to.equal(before);
  });

  it('a single daemon runs the rule\'s jobs as any other\'s: executed, the attempt without a node', async () => {
    const { tcp, api } = await start(tempDir());
    expect(await tcp.request('r', 'RULE SET far. far. on=nowhere shell true')).to.deep.equal(['r OK']);
    expect(await tcp.request('s', `SET far.1 ${nowNs()}`)).to.deep.equal(['s OK']);
    let job: Obj = {};
    await waitFor(async () => {
      job = (await api.json('GET', '/jobs/far.1')).body as Obj;
      return job['status'] === 'executed';
    }, 20_000, 'far.1 executed');
    const last = job['last_attempt'] as Obj;
    expect([last['rule'], last['success'], last['summary']]).to.deep.equal(['far.', true, 'exit status 0']);
    expect(last).to.not.have.property('node');
    const history = ((await api.json('GET', '/jobs/far.1/attempts')).body as { attempts: Obj[] }).attempts;
    expect(history).to.have.length(1);
    expect(history[0]).to.not.have.property('node');
  });
});
