import { expect } from 'chai';
import { availableParallelism } from 'node:os';
import { defaultWorkers, parseCli, SECRET_REQUIRED } from '../../lib/cli.ts';

describe('cli', () => {
  it('defaults to half the CPUs as workers, at least 1 and at most 4', () => {
    expect([1, 2, 3, 4, 6, 8, 16, 64].map(defaultWorkers)).to.deep.equal([1, 1, 1, 2, 3, 4, 4, 4]);
  });

  it('runs with defaults', () => {
    const a = parseCli([]);
    expect(a.mode).to.equal('run');
    if (a.mode !== 'run') return;
    expect(a.config).to.equal(null);
    expect(a.workers).to.equal(defaultWorkers(availableParallelism()));
    expect(a.maxInflight).to.equal(256);
    expect(a.runnerProcesses).to.equal(1);
    expect(a.pidfile).to.equal(null);
    expect(a.tickSliceUs).to.equal(100);
    expect(a.logFormat).to.equal('json');
  });
  it('takes the configuration file from -c, else TICKD_CONFIG (empty: unset), else none', () => {
    const env = { TICKD_CONFIG: '/etc/tickd/from-env.toml' };
    expect(parseCli([], env)).to.include({ mode: 'run', config: '/etc/tickd/from-env.toml' });
    expect(parseCli(['-c', 'flag.toml'], env)).to.include({ config: 'flag.toml' });
    expect(parseCli(['--check'], env)).to.deep.equal({ mode: 'check', config: '/etc/tickd/from-env.toml' });
    expect(parseCli(['--check', '--config', 'flag.toml'], env)).to.deep.equal({ mode: 'check', config: 'flag.toml' });
    expect(parseCli([], { TICKD_CONFIG: '' })).to.include({ config: null });
    expect(parseCli([], {})).to.include({ config: null });
    // An empty -c is a usage error whatever the environment says.
    expect(parseCli(['-c', ''], env).mode).to.equal('usage-error');
  });
  it('reads --log-format json|pretty', () => {
    expect(parseCli(['--log-format', 'pretty'])).to.include({ mode: 'run', logFormat: 'pretty' });
    expect(parseCli(['--log-format', 'json'])).to.include({ logFormat: 'json' });
    const bad = parseCli(['--log-format', 'text']);
    expect(bad).to.deep.equal({ mode: 'usage-error', message: '--log-format must be json or pretty, got "text"' });
  });
  it('reads every flag', () => {
    expect(parseCli(['-c', 'x.toml', '-w', '3', '--pidfile', 'p', '--max-inflight', '9', '--runner-processes', '2', '--tick-slice', '250'])).to.deep.equal({ mode: 'run', config: 'x.toml', workers: 3, pidfile: 'p', maxInflight: 9, runnerProcesses: 2, tickSliceUs: 250, logFormat: 'json', cluster: null });
    expect(parseCli(['--tick-slice', '0'])).to.include({ tickSliceUs: 0 });
    expect(parseCli(['--tick-slice', '100000'])).to.include({ tickSliceUs: 100000 });
    expect(parseCli(['--config', 'x.toml', '--workers', '2'])).to.include({ config: 'x.toml', workers: 2 });
    expect(parseCli(['--check', '-c', 'x'])).to.deep.equal({ mode: 'check', config: 'x' });
    expect(parseCli(['--version']).mode).to.equal('version');
    expect(parseCli(['-V']).mode).to.equal('version');
    expect(parseCli(['-h']).mode).to.equal('help');
    expect(parseCli(['dump', 'log', '--format', 'json'])).to.deep.equal({ mode: 'dump', argv: ['log', '--format', 'json'] });
    expect(parseCli(['ctl', '--addr', 'h:1', 'job', 'ls'])).to.deep.equal({ mode: 'ctl', argv: ['--addr', 'h:1', 'job', 'ls'] });
  });
  it('reads --node-tags, and refuses bad tags or tags without --cluster', () => {
    const run = parseCli(['--cluster', 'nats://127.0.0.1:4222', '--cluster-secret-file', 's', '--node-tags', 'db,eu-west']);
    expect((run as { cluster: { nodeTags: unknown } }).cluster.nodeTags).to.deep.equal(['db', 'eu-west']);
    expect(parseCli(['--cluster', 'nats://127.0.0.1:4222', '--cluster-secret-file', 's', '--node-tags', 'db,,x'])).to.deep.include({ mode: 'usage-error' });
    expect((parseCli(['--cluster', 'nats://127.0.0.1:4222', '--cluster-secret-file', 's', '--node-tags', 'db,db']) as { message: string }).message).to.match(/--node-tags: "db" is given twice/);
    expect(parseCli(['--node-tags', 'db'])).to.deep.equal({ mode: 'usage-error', message: '--node-tags needs --cluster' });
  });
  it('reads the cluster flags, with their defaults', () => {
    const run = parseCli(['--cluster', 'nats://u:p@127.0.0.1:4222,tls://h2:4223', '--cluster-name', 'prod', '--node-name', 'n1', '--cluster-replicas', '1', '--lease-ttl', '1500ms', '--checkpoint-records', '500', '--cluster-secret-file', 's', '--cluster-allow-unauthenticated-nats']);
    expect(run).to.deep.include({
      cluster: {
        urls: ['nats://u:p@127.0.0.1:4222', 'tls://h2:4223'], credsFile: null, caFile: null, name: 'prod', nodeName: 'n1', replicas: 1, leaseTtlMs: 1500, checkpointRecords: 500,
        secretFile: 's', allowUnauthenticatedNats: true, nodeTags: null,
      },
    });
    const defaults = parseCli(['--cluster', 'nats://127.0.0.1:4222', '--cluster-secret-file', 's']);
    expect(defaults).to.deep.include({ mode: 'run' });
    expect((defaults as { cluster: { name: string; replicas: number; leaseTtlMs: number } }).cluster).to.include({ name: 'tickd', replicas: 3, leaseTtlMs: 3000, checkpointRecords: 10_000, allowUnauthenticatedNats: false });
    expect(parseCli(['--lease-ttl', '2s', '--cluster', 'nats://h:1', '--cluster-secret-file', 's'])).to.have.nested.property('cluster.leaseTtlMs', 2000);
  });
  it('refuses cluster mode without --cluster-secret-file, and the cluster flags without --cluster', () => {
    expect(parseCli(['--cluster', 'nats://h:1'])).to.deep.equal({ mode: 'usage-error', message: SECRET_REQUIRED });
    expect(parseCli(['--cluster-secret-file', 's'])).to.deep.equal({ mode: 'usage-error', message: '--cluster-secret-file needs --cluster' });
    expect(parseCli(['--cluster-allow-unauthenticated-nats'])).to.deep.equal({ mode: 'usage-error', message: '--cluster-allow-unauthenticated-nats needs --cluster' });
  });
  for (const argv of [
    ['--cluster', 'http://h:1'], ['--cluster', 'nats://h:1/path'], ['--cluster', 'nats://h:1', '--cluster-name', 'a.b'],
    ['--cluster', 'nats://h:1', '--cluster-replicas', '6'], ['--cluster', 'nats://h:1', '--lease-ttl', '100ms'],
    ['--cluster', 'nats://h:1', '--lease-ttl', '3'], ['--cluster-name', 'x'], ['--lease-ttl', '3s'],
    ['--cluster', 'nats://h:1', '--checkpoint-records', '0'], ['--cluster', 'nats://h:1', '--checkpoint-records', '1000000001'], ['--checkpoint-records', '5'],
  ]) {
    it(`usage error for ${argv.join(' ')}`, () => expect(parseCli(argv).mode).to.equal('usage-error'));
  }
  for (const argv of [['--bogus'], ['-c'], ['-w', '0'], ['-w', 'two'], ['--max-inflight', '-1'], ['--runner-processes', '0'], ['--runner-processes', '65'], ['--tick-slice', '99'], ['--tick-slice', '100001'], ['--tick-slice', '1e3'], ['extra'], ['-c', ''], ['--log-format'], ['--log-format', 'PRETTY']]) {
    it(`usage error for ${argv.join(' ')}`, () => expect(parseCli(argv).mode).to.equal('usage-error'));
  }
});
