// Cluster checkpoints (lib/jetstream/checkpoint.ts, checkpoint-make.ts;
// tickd(8) CLUSTER MODE, Checkpoints) against a real nats-server of the test's own: a checkpoint holds the
// stream's folded state up to its sequence; a replay from it plus the stream after it gives
// exactly what a replay of the whole stream gives; a head is replaced only by compare-and-set;
// a replay during which a checkpoint is made reads again.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sinon from 'sinon';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';
import type { ClusterOptions } from '../../lib/cli.ts';
import { checkpointNames, readHead, sealHead, writeCheckpoint } from '../../lib/jetstream/checkpoint.ts';
import { makeCheckpoint } from '../../lib/jetstream/checkpoint-make.ts';
import { runImport } from '../../lib/tools/import.ts';
import { connectCluster } from '../../lib/jetstream/connect.ts';
import { replayStream } from '../../lib/jetstream/replay.ts';
import { clusterSubjects } from '../../lib/jetstream/subjects.ts';
import type { LogRecord } from '../../lib/engine/journal.ts';
import { encodeRecord } from '../../lib/logfile/codec.ts';
import { silentLogger } from '../../lib/log.ts';
import { publishSealed, testKeys, testSecretFile, testTrust } from '../helpers/cluster-secret.ts';

const NAME = 'cp';
const subjects = clusterSubjects(NAME);
const names = checkpointNames(NAME);

function job(id: string, execution: bigint, status: 'planned' | 'executed' = 'planned'): LogRecord {
  return { t: 'job', job: { id, execution, status } };
}

/** The state a replay builds: each entry's last record, removed ones gone. */
async function replayed(nc: NatsConnection, jsm: JetStreamManager, restart?: () => void): Promise<{ state: Map<string, string>; checkpointSeq: number; records: number }> {
  const state = new Map<string, string>();
  const r = await replayStream(nc, jsm, subjects, testTrust(), (rec) => {
    if (rec.t === 'job') state.set(`j:${rec.job.id}`, `${rec.job.execution} ${rec.job.status}`);
    else if (rec.t === 'rule') state.set(`r:${rec.rule.id}`, rec.rule.pattern);
    else if (rec.t === 'job.removed' || rec.t === 'rule.removed') state.delete(`${rec.t === 'job.removed' ? 'j' : 'r'}:${rec.id}`);
  }, () => { state.clear(); restart?.(); });
  return { state, checkpointSeq: r.checkpointSeq, records: r.records };
}

describe('cluster checkpoints', function () {
  this.timeout(60_000);
  let nats: NatsCluster;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let opts: ClusterOptions;

  before(async function () {
    nats = await startNats(requireNatsServer(this), 1);
    nc = await connectCluster({ urls: nats.urls.split(','), credsFile: null, caFile: null, name: 'cp-test', log: silentLogger(), connectTimeoutMs: 10_000, allowUnauthenticatedNats: false });
    jsm = await jetstreamManager(nc);
    js = jetstream(nc);
    opts = { urls: nats.urls.split(','), credsFile: null, caFile: null, name: NAME, nodeName: 'n1', replicas: 1, leaseTtlMs: 3000, checkpointRecords: 1, secretFile: testSecretFile(), allowUnauthenticatedNats: false, nodeTags: null };
  });
  after(async () => {
    await nc?.close();
    await nats?.stop();
  });
  afterEach(async () => {
    sinon.restore();
    for (const s of [subjects.stream, names.stream]) await jsm.streams.delete(s).catch(() => {});
  });

  const publish = async (rec: LogRecord): Promise<number> => {
    const subject = subjects.of(rec);
    return publishSealed(js, jsm, subjects.stream, subject, rec);
  };
  const makeStream = () => jsm.streams.add({ name: subjects.stream, subjects: [subjects.all], max_msgs_per_subject: 1 });

  it('holds the folded state up to its sequence; a replay from it and the stream after it equals a replay of the whole stream', async () => {
    // Long identifiers: a state of several chunks.
    const a = (i: number): string => `a.${i}.${'p'.repeat(100)}`;
    await makeStream();
    for (let i = 0; i < 3000; i++) await publish(job(a(i), BigInt(i)));
    await publish({ t: 'rule', rule: { id: 'r.1', pattern: 'a.', runner: { type: 'shell', command: 'true' } } });
    const removedAt = await publish({ t: 'job.removed', id: a(7) });
    await publish(job(a(8), 88n, 'executed'));
    const whole = await replayed(nc, jsm);
    expect(whole.checkpointSeq).to.equal(0);

    const made = await makeCheckpoint(opts);
    expect(made, 'two messages were replaced: a.7 by its removal, a.8 by its new state').to.include({ seq: 3003, records: 3000, read: 3001 });
    expect(made!.removals).to.deep.equal([removedAt]);
    const { head } = await readHead(jsm, names, (await jsm.streams.info(subjects.stream)).created, testKeys);
    expect(head!.chunks).to.be.greaterThan(1);
    const fromCheckpoint = await replayed(nc, jsm);
    expect(fromCheckpoint.checkpointSeq).to.equal(3003);
    expect(fromCheckpoint.state).to.deep.equal(whole.state);
    expect(fromCheckpoint.state.has(`j:${a(7)}`)).to.equal(false);

    // After it: new records, a removal of a job only the checkpoint holds, a rewrite.
    await publish(job('b.1', 1n));
    await publish({ t: 'job.removed', id: a(9) });
    await publish(job(a(10), 1010n));
    await jsm.streams.deleteMessage(subjects.stream, removedAt); // the leader's deletion of a covered removal
    const after = await replayed(nc, jsm);
    expect(after.checkpointSeq).to.equal(3003);
    expect(after.records).to.equal(3000 + 3);
    expect(after.state.get('j:b.1')).to.equal('1 planned');
    expect(after.state.get(`j:${a(10)}`)).to.equal('1010 planned');
    expect(after.state.has(`j:${a(9)}`)).to.equal(false);
    expect(after.state.has(`j:${a(7)}`)).to.equal(false);
    expect(after.state.size).to.equal(whole.state.size);

    // The next checkpoint builds on this one, reads only what came after, and replaces it.
    const next = await makeCheckpoint(opts);
    expect(next).to.include({ seq: 3006, records: 3000, read: 3 });
    expect((await replayed(nc, jsm)).state).to.deep.equal(after.state);
    expect(await makeCheckpoint(opts), 'nothing new').to.equal(null);
    // Only the last checkpoint's chunks and head are left.
    const cp = await jsm.streams.info(names.stream);
    const { head: last } = await readHead(jsm, names, (await jsm.streams.info(subjects.stream)).created, testKeys);
    expect(cp.state.messages).to.equal(last!.chunks + 1);
  });

  it('one made from the whole stream reports every removal still in it, those a lost leader left too', async () => {
    await makeStream();
    for (let i = 0; i < 10; i++) await publish(job(`w.${i}`, BigInt(i)));
    const lostAt = await publish({ t: 'job.removed', id: 'w.1' });
    expect((await makeCheckpoint(opts))!.removals).to.deep.equal([lostAt]);
    // Its leader lost before deleting it: the next checkpoint, on the last, does not see it.
    await publish(job('w.10', 10n));
    expect((await makeCheckpoint(opts))!.removals).to.deep.equal([]);
    await publish(job('w.11', 11n));
    const whole = await makeCheckpoint(opts, true);
    expect(whole).to.include({ seq: 13, records: 11 });
    expect(whole!.removals).to.deep.equal([lostAt]);
    expect((await replayed(nc, jsm)).state.size).to.equal(11);
  });

  it('a head is replaced only if the one it was built on is still the last: the loser leaves no chunks', async () => {
    await makeStream();
    await publish(job('x', 1n));
    const created = (await jsm.streams.info(subjects.stream)).created;
    const none = await readHead(jsm, names, created, testKeys);
    expect(none).to.deep.equal({ head: null, rev: 0 });
    await makeCheckpoint(opts);
    const stale = await writeCheckpoint(js, jsm, names, testKeys, { seq: 1, created }, none, { chunks: (async function* () { yield Buffer.from(encodeRecord(job('x', 1n))); })(), records: 1 });
    expect(stale).to.equal(null);
    const { head } = await readHead(jsm, names, created, testKeys);
    expect((await jsm.streams.info(names.stream)).state.messages).to.equal(head!.chunks + 1);
  });

  it('a checkpoint of another incarnation of the stream is not used', async () => {
    await makeStream();
    await publish(job('old', 1n));
    await makeCheckpoint(opts);
    await jsm.streams.delete(subjects.stream);
    await makeStream();
    await publish(job('new', 2n));
    const r = await replayed(nc, jsm);
    expect(r.checkpointSeq).to.equal(0);
    expect([...r.state.keys()]).to.deep.equal(['j:new']);
  });

  it('a checkpoint that cannot be read is passed over: the whole stream is read instead, and says why', async () => {
    await makeStream();
    for (let i = 0; i < 20; i++) await publish(job(`d.${i}`, BigInt(i)));
    await publish({ t: 'job.removed', id: 'd.3' });
    await makeCheckpoint(opts);
    // Its one chunk replaced by bytes that are no record (a damaged store, a foreign writer).
    const created = (await jsm.streams.info(subjects.stream)).created;
    const { head } = await readHead(jsm, names, created, testKeys);
    await jsm.streams.purge(names.stream, { filter: names.chunks(head!.id) });
    const chunk = Buffer.alloc(head!.bytes, 0xff);
    const at = (await js.publish(names.chunk(head!.id, 0), chunk)).seq;
    await js.publish(names.head, JSON.stringify(sealHead(testKeys, { ...head!, seqs: [at], first: at, last: at })));
    let restarts = 0;
    const r = await replayed(nc, jsm, () => restarts++);
    expect(restarts).to.equal(1);
    expect(r.checkpointSeq).to.equal(0);
    expect(r.state.size).to.equal(19);
    expect(r.state.has('j:d.3')).to.equal(false);
    expect((await replayStream(nc, jsm, subjects, testTrust(), () => {})).checkpointError).to.match(/frame length|does not decode/);
    // Its chunks gone, the head unchanged (a head stored while its maker saw a timeout, a
    // lost replica): no amount of reading again helps, the whole stream is read.
    const { head: damaged } = await readHead(jsm, names, created, testKeys);
    for (const seq of damaged!.seqs) await jsm.streams.deleteMessage(names.stream, seq);
    const lost = await replayStream(nc, jsm, subjects, testTrust(), () => {});
    expect(lost, '19 jobs and the removal of d.3').to.include({ checkpointSeq: 0, records: 20 });
    expect(lost.checkpointError).to.match(/read 0 of its 1 chunks/);
    // The next checkpoint, unable to build on it, is made from the whole stream.
    await publish(job('d.20', 20n));
    expect(await makeCheckpoint(opts)).to.include({ seq: 22, records: 20 });
    const again = await replayed(nc, jsm);
    expect(again.checkpointSeq).to.equal(22);
    expect(again.state.size).to.equal(20);
  });

  it('a replay under checkpoints made faster than it reads gives up on them and reads the whole stream', async () => {
    await makeStream();
    for (let i = 0; i < 30; i++) await publish(job(`f.${i}`, BigInt(i)));
    await makeCheckpoint(opts);
    const get = jsm.streams.getMessage.bind(jsm.streams);
    let calls = 0;
    let written = 30;
    sinon.stub(jsm.streams, 'getMessage').callsFake(async (stream, query) => {
      if (++calls % 2 === 0) { // every replay's second look at the head: a new one each time
        await publish(job(`f.${written++}`, 1n));
        await makeCheckpoint(opts);
      }
      return get(stream, query);
    });
    let restarts = 0;
    const r = await replayed(nc, jsm, () => restarts++);
    expect(restarts).to.equal(3);
    expect(r.checkpointSeq).to.equal(0);
    expect(r.state.size).to.equal(written);
  });

  it('a checkpoint whose chunk publish fails leaves no chunk and no unhandled rejection', async () => {
    await makeStream();
    const created = (await jsm.streams.info(subjects.stream)).created;
    await makeCheckpoint(opts); // the checkpoint stream, empty
    await jsm.streams.purge(names.stream);
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      let n = 0;
      const failing = { publish: (subject: string, data: Uint8Array) => (n++ === 3 ? Promise.reject(new Error('no answer')) : js.publish(subject, data)) } as unknown as JetStreamClient;
      const frame = Buffer.from(encodeRecord(job('c', 1n)));
      const chunks = (async function* () { for (let i = 0; i < 20; i++) yield frame; })();
      const base = await readHead(jsm, names, created, testKeys);
      let failed: unknown = null;
      await writeCheckpoint(failing, jsm, names, testKeys, { seq: 1, created }, base, { chunks, records: 20 }).catch((err: unknown) => { failed = err; });
      expect(String(failed)).to.match(/no answer/);
      await new Promise((r) => setTimeout(r, 50)); // unhandled rejections are reported after a turn
      expect(unhandled).to.deep.equal([]);
      expect((await jsm.streams.info(names.stream)).state.messages, 'chunks left').to.equal(0);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('an emptied stream does not take its old checkpoint, and an import into it removes that', async () => {
    await makeStream();
    for (let i = 0; i < 10; i++) await publish(job(`e.${i}`, BigInt(i)));
    await makeCheckpoint(opts);
    await jsm.streams.purge(subjects.stream); // emptied by hand: its creation time stays
    const empty = await replayed(nc, jsm);
    expect([empty.checkpointSeq, empty.state.size]).to.deep.equal([0, 0]);
    const dir = tempDir();
    const logfile = join(dir, 'logfile');
    writeFileSync(logfile, Buffer.concat([encodeRecord(job('imported.1', 5n))]));
    const out: string[] = [];
    const sink = { write: (t: string) => out.push(t) } as unknown as NodeJS.WritableStream;
    expect(await runImport([logfile, '--cluster', nats.urls, '--cluster-name', NAME, '--cluster-secret-file', testSecretFile()], sink, sink), out.join('')).to.equal(0);
    expect((await readHead(jsm, names, (await jsm.streams.info(subjects.stream)).created, testKeys)).rev, 'the old head').to.equal(0);
    const after = await replayed(nc, jsm);
    expect([...after.state.keys()]).to.deep.equal(['j:imported.1']);
  });

  it('a replay during which a new checkpoint is made reads everything again', async () => {
    await makeStream();
    for (let i = 0; i < 50; i++) await publish(job(`m.${i}`, BigInt(i)));
    await makeCheckpoint(opts);
    await publish({ t: 'job.removed', id: 'm.1' });
    // The moment between the replay's read of the stream and its second look at the head:
    // another node's checkpoint lands, after which its leader may delete the removal.
    const get = jsm.streams.getMessage.bind(jsm.streams);
    let calls = 0;
    sinon.stub(jsm.streams, 'getMessage').callsFake(async (stream, query) => {
      if (++calls === 2) await makeCheckpoint(opts);
      return get(stream, query);
    });
    let restarts = 0;
    const r = await replayed(nc, jsm, () => restarts++);
    expect(restarts).to.equal(1);
    expect(r.checkpointSeq).to.equal(51);
    expect(r.state.size).to.equal(49);
    expect(r.state.has('j:m.1')).to.equal(false);
  });

  it('the leader has one made once enough is written, deletes removals only once one covers them, and a restart starts from it', async () => {
    const args = ['--cluster', nats.urls, '--cluster-name', NAME, '--node-name', 'n-test', '--cluster-replicas', '1', '--lease-ttl', '1s', '--checkpoint-records', '50', '--cluster-secret-file', testSecretFile()];
    const dir = tempDir();
    let daemon = await Daemon.start({ args, dir, readyTimeoutMs: 30_000 });
    try {
      await daemon.waitForLog((r) => r['msg'] === 'role changed: leader', 15_000);
      const c = await LineClient.connect(daemon.tcp);
      const send = async (lines: string[]): Promise<void> => {
        c.write(lines.map((l, i) => `x${i} ${l}\n`).join(''));
        for (let i = 0; i < lines.length; i++) expect(await c.collect(`x${i}`, 10_000)).to.deep.equal([`x${i} OK`]);
      };
      await send(Array.from({ length: 40 }, (_, i) => `SET k.${i} 4000000000000000000`));
      await send(Array.from({ length: 5 }, (_, i) => `REMOVE k.${i}`));
      // 45 records, fewer than 50: no checkpoint yet, so the removals stay in the stream.
      const created = (await jsm.streams.info(subjects.stream)).created;
      expect((await readHead(jsm, names, created, testKeys)).head).to.equal(null);
      expect((await jsm.streams.info(subjects.stream)).state.messages).to.equal(40);
      await send(Array.from({ length: 20 }, (_, i) => `SET k.${40 + i} 4000000000000000000`));
      const made = await daemon.waitForLog((r) => r['msg'] === 'checkpoint made', 15_000);
      expect(made).to.include({ seq: 65, records: 55, removals: 5 });
      await waitFor(async () => (await jsm.streams.info(subjects.stream)).state.messages === 55, 10_000, 'the covered removals deleted');
      // A removal no checkpoint covers stays, past the hold and a sweep (a wait for something
      // that must not happen): the restart reads the checkpoint, which still has k.10, then it.
      await send(['REMOVE k.10']);
      await new Promise((r) => setTimeout(r, 2_600));
      c.close();
      expect((await daemon.stop()).code).to.equal(0);
      daemon = await Daemon.start({ args, dir, readyTimeoutMs: 30_000 });
      expect(await daemon.waitForLog((r) => r['msg'] === 'stream replayed')).to.include({ records: 56, checkpointSeq: 65 });
      const c2 = await LineClient.connect(daemon.tcp);
      const listed = await c2.request('q', 'QUERY k.', 10_000);
      c2.close();
      expect(listed.length - 1, 'jobs after the restart').to.equal(54);
      expect(listed.filter((l) => /^q k\.([0-4]|10) /.test(l)), 'removed jobs').to.deep.equal([]);
    } finally {
      await daemon.kill();
    }
  });
});
