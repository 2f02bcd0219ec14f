// Moving in and out of cluster mode (tickd(8) CLUSTER MODE, Import; THE DUMP SUBCOMMAND) on a
// real nats-server started by the test (never the shared one at 4222): `tickd import LOGFILE`
// puts a logfile's last states on a new stream, and `tickd dump --cluster` prints them in
// exactly the lines, and the order, of `tickd dump LOGFILE --compact`; a daemon started on the
// stream sees what a daemon on the logfile sees. A stream that holds anything is refused and
// left as it was; a read of the stream ends even where its last messages were deleted (the
// journal deletes removals); unreachable NATS, a missing stream and usage errors have their
// exit statuses.
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { LogRecord } from '../../lib/engine/journal.ts';
import { encodeRecord } from '../../lib/logfile/codec.ts';
import { readStream, trusted } from '../../lib/jetstream/replay.ts';
import { clusterSubjects } from '../../lib/jetstream/subjects.ts';
import { Daemon, runTickd } from '../helpers/daemon.ts';
import { closeNatsClients, connectNats, freePort, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';
import { FAR_FUTURE_NS, logfileDaemon, logfileOf, snapshot } from './logfile-helpers.ts';
import { publishSealed, testSecretFile, testTrust } from '../helpers/cluster-secret.ts';

const FAR = FAR_FUTURE_NS;
const BIG = FAR_FUTURE_NS + 123_456_789n; // above 2^53: must stay exact

const job = (id: string, execution: bigint, status: 'planned' | 'executed' | 'failed' = 'planned'): LogRecord => ({ t: 'job', job: { id, execution, status } });

/** Every kind of record: overwrites (an entry moves to the end), removals, a re-created job,
 * a job and a rule with one identifier, identifiers with `.` and `_` (escaped in subjects). */
const HISTORY: LogRecord[] = [
  { t: 'rule', rule: { id: 'r.shell', pattern: 'imp.', runner: { type: 'shell', command: 'printf "%s" \\ done' } } },
  { t: 'rule', rule: { id: 'r.direct', pattern: 'imp.d.', runner: { type: 'direct', executable: '/bin/echo', args: ['two words', '', '#hash'] } } },
  { t: 'rule', rule: { id: 'r.gone', pattern: 'gone.', runner: { type: 'http', method: 'PUT', url: 'http://127.0.0.1:9/hook' } } },
  job('imp.a_b.c_d', FAR),
  job('imp.moved', FAR),
  job('imp.big', BIG),
  job('imp.gone', FAR),
  { t: 'rule', rule: { id: 'r.shell', pattern: 'imp.', runner: { type: 'shell', command: 'echo replaced' } } },
  { t: 'rule.removed', id: 'r.gone' },
  { t: 'job.removed', id: 'imp.gone' },
  job('imp.moved', FAR + 7n),
  job('imp.done', FAR + 1n, 'executed'),
  job('imp.failed', FAR + 2n, 'failed'),
  job('same', FAR + 3n),
  { t: 'rule', rule: { id: 'same', pattern: 'same.', runner: { type: 'redis', url: 'redis://localhost:6379/2', command: 'PUBLISH', key: 'chan' } } },
  { t: 'rule', rule: { id: 'r.amqp', pattern: 'imp.am.', runner: { type: 'amqp', dsn: 'amqp://u:p@localhost:5672/vh', exchange: 'ex', routing_key: 'rk' } } },
  job('imp.recreated', FAR),
  { t: 'job.removed', id: 'imp.recreated' },
  { t: 'rule', rule: { id: 'r.awf', pattern: 'imp.aw.', runner: { type: 'awf', workflow: 'report', inputs: ['title=a b', 'x=1'] } } },
  job('imp.recreated', FAR + 9n),
];
const LAST_STATES = 12; // 7 jobs, 5 rules

function writeLog(path: string, records: readonly LogRecord[]): void {
  writeFileSync(path, Buffer.concat(records.map(encodeRecord)));
}

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

describe('cluster mode: tickd import and tickd dump --cluster', function () {
  this.timeout(40_000);
  let bin = '';
  let nats: NatsCluster | null = null;
  let url = '';
  before(async function () {
    bin = requireNatsServer(this);
    nats = await startNats(bin, 1);
    url = nats.urls;
  });
  after(async () => {
    await closeNatsClients();
    await nats?.stop();
  });

  const streamState = async (name: string) => {
    const jsm = await jetstreamManager(await connectNats(url));
    return (await jsm.streams.info(name)).state;
  };
  const importLog = (path: string, name: string) => runTickd(['import', path, '--cluster', url, '--cluster-name', name, '--cluster-replicas', '1', '--cluster-secret-file', testSecretFile()]);
  const dumpStream = (name: string, ...more: string[]) => runTickd(['dump', '--cluster', url, '--cluster-name', name, '--cluster-secret-file', testSecretFile(), ...more]);

  it('a logfile imported into a new stream dumps as the logfile\'s compacted dump, in the same order', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    writeLog(path, HISTORY);
    const before = readFileSync(path);
    const imported = await importLog(path, 'imp1');
    expect(imported.stderr).to.equal('');
    expect(imported.code).to.equal(0);
    expect(imported.stdout).to.equal(`imported ${LAST_STATES} records (7 jobs, 5 rules) from ${path} into stream imp1 at ${url}: last sequence ${LAST_STATES}, 1 replica\n`);
    expect(readFileSync(path).equals(before), 'the logfile is not changed').to.equal(true);

    const [logText, logJson, streamText, streamJson] = await Promise.all([
      runTickd(['dump', path, '--compact']), runTickd(['dump', path, '--compact', '--format', 'json']),
      dumpStream('imp1'), dumpStream('imp1', '--format', 'json'),
    ]);
    for (const r of [logText, logJson, streamText, streamJson]) expect(r.code, r.stderr).to.equal(0);
    expect(lines(streamText.stdout)).to.have.length(LAST_STATES);
    // The fold keeps the order of last write and the import publishes in that order: equal as is.
    expect(streamText.stdout).to.equal(logText.stdout);
    expect(streamJson.stdout).to.equal(logJson.stdout);
    expect(logJson.stdout).to.include(`"execution":${BIG}`);
    // The stream is compact already: --compact changes nothing.
    const [compactText, compactJson] = await Promise.all([dumpStream('imp1', '--compact'), dumpStream('imp1', '--compact', '--format', 'json')]);
    expect(compactText.stdout).to.equal(logText.stdout);
    expect(compactJson.stdout).to.equal(logJson.stdout);

    // One message per job and rule, on the subject of its identifier.
    const state = await streamState('imp1');
    expect([state.messages, state.last_seq, state.num_subjects]).to.deep.equal([LAST_STATES, LAST_STATES, LAST_STATES]);
    const jsm = await jetstreamManager(await connectNats(url));
    const subjects = clusterSubjects('imp1');
    expect((await jsm.streams.getMessage('imp1', { last_by_subj: subjects.job('imp.a_b.c_d') }))?.subject).to.equal('imp1.j.imp_da__b_dc__d');
    expect((await jsm.streams.getMessage('imp1', { last_by_subj: subjects.rule('same') }))?.seq).to.equal(9);

    // A daemon on the stream sees what a daemon on the logfile sees.
    const onStream = await Daemon.start({
      args: ['--cluster', url, '--cluster-name', 'imp1', '--node-name', 'n-imp', '--cluster-replicas', '1', '--lease-ttl', '1s', '--cluster-secret-file', testSecretFile()],
      dir: tempDir(), readyTimeoutMs: 20_000,
    });
    const clusterView = await snapshot(onStream.tcp).finally(() => onStream.stop());
    const onLog = await logfileDaemon(dir);
    const logView = await snapshot(onLog.tcp).finally(() => onLog.stop());
    expect(clusterView.jobs).to.have.length(7);
    expect(clusterView).to.deep.equal(logView);
  });

  it('replays a leftover .to_compress first, as startup does', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    const older = HISTORY.slice(0, 9);
    const newer = HISTORY.slice(9);
    writeLog(`${path}.to_compress`, older);
    writeLog(path, newer);
    const whole = join(dir, 'whole');
    writeLog(whole, HISTORY);
    const imported = await importLog(path, 'imp2');
    expect(imported.code, imported.stderr).to.equal(0);
    expect(imported.stdout).to.match(/^imported 12 records \(7 jobs, 5 rules\) .* last sequence 12, 1 replica\n$/);
    const [expected, got] = await Promise.all([runTickd(['dump', whole, '--compact']), dumpStream('imp2')]);
    expect(got.code, got.stderr).to.equal(0);
    expect(got.stdout).to.equal(expected.stdout);
  });

  it('refuses a stream that holds any message and leaves it unchanged; an emptied stream is taken', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    writeLog(path, HISTORY.slice(0, 5));
    expect((await importLog(path, 'imp3')).code).to.equal(0);
    const before = await streamState('imp3');
    const dumped = await dumpStream('imp3');
    expect(before.messages).to.equal(5);

    writeLog(path, HISTORY);
    const again = await importLog(path, 'imp3');
    expect(again.code).to.equal(1);
    expect(again.stdout).to.equal('');
    expect(again.stderr).to.equal(`tickd import: stream imp3 at ${url} is not empty (5 messages, last sequence 5): nothing imported; `
      + 'import only into a new or empty stream, with the cluster\'s nodes stopped\n');
    expect(await streamState('imp3')).to.deep.include({ messages: 5, last_seq: 5 });
    expect((await dumpStream('imp3')).stdout).to.equal(dumped.stdout);

    // Emptied (every message purged): allowed, and the writes follow its last sequence.
    const jsm = await jetstreamManager(await connectNats(url));
    await jsm.streams.purge('imp3');
    const empty = await dumpStream('imp3');
    expect([empty.code, empty.stdout, empty.stderr]).to.deep.equal([0, '', '']);
    const into = await importLog(path, 'imp3');
    expect(into.code, into.stderr).to.equal(0);
    expect(into.stdout).to.match(/ last sequence 17, 1 replica\n$/);
    expect((await dumpStream('imp3')).stdout).to.equal((await runTickd(['dump', path, '--compact'])).stdout);
  });

  it('a stream whose last write was a removal (deleted) dumps without waiting for it', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    writeLog(path, HISTORY.slice(0, 4));
    expect((await importLog(path, 'imp4')).code).to.equal(0);
    // What the journal does for REMOVE: publish the removal, then delete it.
    const nc = await connectNats(url);
    const jsm = await jetstreamManager(nc);
    const subject = clusterSubjects('imp4').job('imp.a_b.c_d');
    const seq = await publishSealed(jetstream(nc), jsm, 'imp4', subject, { t: 'job.removed', id: 'imp.a_b.c_d' });
    expect(seq).to.equal(5);
    await jsm.streams.deleteMessage('imp4', seq, false);
    expect(await streamState('imp4')).to.deep.include({ messages: 3, last_seq: 5 });
    const started = Date.now();
    const r = await dumpStream('imp4');
    expect(r.code, r.stderr).to.equal(0);
    expect(lines(r.stdout)).to.deep.equal(lines((await runTickd(['dump', path, '--compact'])).stdout).slice(0, 3));
    expect(Date.now() - started).to.be.below(5_000);
  });

  it('a read whose messages vanish before their delivery ends instead of waiting', async () => {
    // Purges between the dump's look at the stream and the read (as a leader's removals do):
    // the look is replayed stale, the messages are gone, and the read must still end.
    const nc = await connectNats(url);
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    await jsm.streams.add({ name: 'imp5', subjects: ['imp5.>'], max_msgs_per_subject: 1, num_replicas: 1 });
    const seqs: number[] = [];
    for (const id of ['v1', 'v2']) seqs.push(await publishSealed(js, jsm, 'imp5', clusterSubjects('imp5').job(id), job(id, FAR)));
    const stale = await jsm.streams.info('imp5');
    for (const seq of seqs) await jsm.streams.deleteMessage('imp5', seq);
    const looksStale = { streams: { info: () => Promise.resolve(stale) } } as unknown as JetStreamManager;
    const seen: number[] = [];
    expect(await readStream(js, looksStale, 'imp5', trusted(testTrust(), 'imp5'), (_rec, seq) => seen.push(seq), () => Promise.resolve())).to.equal(0);
    expect(seen).to.deep.equal([]);
  });

  it('unreachable NATS, a missing stream and a corrupt logfile exit 1 with one line naming them', async () => {
    const port = await freePort();
    const [dump, imp, missing] = await Promise.all([
      runTickd(['dump', '--cluster', `nats://user:s3cret@127.0.0.1:${port}`, '--cluster-secret-file', testSecretFile()]),
      runTickd(['import', join(tempDir(), 'absent-is-read-first'), '--cluster', `nats://127.0.0.1:${port}`, '--cluster-secret-file', testSecretFile()]),
      dumpStream('nosuch'),
    ]);
    expect(dump.code).to.equal(1);
    expect(dump.stderr).to.match(new RegExp(`^tickd dump: cannot connect to NATS at nats://127\\.0\\.0\\.1:${port}: [^\\n]+\\n$`));
    expect(dump.stderr).not.to.include('s3cret');
    expect(imp.code).to.equal(1);
    expect(imp.stderr).to.match(/^tickd import: cannot read .*absent-is-read-first: ENOENT[^\n]*\n$/);
    const path = logfileOf(tempDir());
    writeLog(path, HISTORY);
    const unreachable = await runTickd(['import', path, '--cluster', `nats://127.0.0.1:${port}`, '--cluster-secret-file', testSecretFile()]);
    expect(unreachable.code).to.equal(1);
    expect(unreachable.stderr).to.match(new RegExp(`^tickd import: cannot connect to NATS at nats://127\\.0\\.0\\.1:${port}: [^\\n]+\\n$`));
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.equal(`tickd dump: no stream nosuch on NATS at ${url} (--cluster-name nosuch)\n`);

    // A record that does not decode: nothing is written, not even the stream.
    const good = encodeRecord(HISTORY[0]!);
    const bad = encodeRecord(HISTORY[1]!);
    bad[4] = 0x42; // the record type byte: an extension record's (doc/logfile-format.md) ...
    bad[5] = 0;
    bad[6] = 2; // ... that this tickd's format should know: damage, not a newer tickd's
    writeFileSync(path, Buffer.concat([good, bad]));
    const corrupt = await importLog(path, 'imp6');
    expect(corrupt.code).to.equal(1);
    expect(corrupt.stderr).to.equal(`tickd import: ${path}: record at byte offset ${good.length} does not decode: unknown record type byte 66 (byte offset ${good.length + 4}); nothing imported\n`);
    expect((await dumpStream('imp6')).stderr).to.match(/^tickd dump: no stream imp6 /);
  });

  it('usage errors exit 2 with the usage', async () => {
    const cases: [string[], RegExp][] = [
      [['dump', 'log', '--cluster', url], /LOGFILE or --cluster, not both/],
      [['dump', '--cluster', url, '--follow'], /--follow reads a logfile only/],
      [['dump', '--cluster', 'http://127.0.0.1:1'], /--cluster takes nats:\/\//],
      [['dump', 'log', '--cluster-name', 'x'], /--cluster-name needs --cluster/],
      [['dump', '--cluster', url, '--cluster-name', 'a.b'], /--cluster-name must be/],
      [['dump', '--cluster', url, '--cluster-replicas', '1'], /Unknown option '--cluster-replicas'/],
      [['import'], /missing LOGFILE/],
      [['import', 'log'], /missing --cluster/],
      [['import', 'a', 'b', '--cluster', url], /one LOGFILE expected, got 2/],
      [['import', 'log', '--cluster', url, '--cluster-replicas', '9'], /--cluster-replicas must be 1 to 5/],
      [['import', 'log', '--cluster', url, '--format', 'json'], /Unknown option '--format'/],
    ];
    const results = await Promise.all(cases.map(([args]) => runTickd(args)));
    cases.forEach(([args, message], i) => {
      const r = results[i]!;
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stdout, args.join(' ')).to.equal('');
      expect(r.stderr, args.join(' ')).to.match(message);
      expect(r.stderr, args.join(' ')).to.match(new RegExp(`^tickd ${args[0]}: .*\\nUsage: tickd ${args[0]} LOGFILE`));
    });
  });
});
