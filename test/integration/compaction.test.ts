// Background compaction on the real daemon (tickd.toml(5) [database]; doc/logfile-format.md):
// a log of many overwrites shrinks and replays to the same QUERY/LISTRULES;
// STAT `compression` says idle/running/success/failure as it happens; a leftover
// `.to_compress` found at startup is folded at once, not at the first timer tick.
import { expect } from 'chai';
import { existsSync, mkdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeRecord } from '../../lib/logfile/codec.ts';
import type { LogRecord } from '../../lib/engine/journal.ts';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, stat, waitFor } from '../helpers/client.ts';
import { alive, descendantsRunning } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';
import { FAR_FUTURE_NS, logfileDaemon, logfileOf, logRecords, snapshot } from './logfile-helpers.ts';

const COMPACTED = 'logfile compacted';

/** Sends every command in one write and insists that each is answered OK. */
async function pipeline(c: LineClient, commands: string[]): Promise<void> {
  c.write(commands.map((cmd, i) => `p${i} ${cmd}\n`).join(''));
  for (let i = 0; i < commands.length; i++) {
    const lines = await c.collect(`p${i}`, 20000);
    if (lines[lines.length - 1] !== `p${i} OK`) throw new Error(`${commands[i]} -> ${lines.join(' | ')}`);
  }
}

async function compression(daemon: Daemon): Promise<string> {
  const c = await LineClient.connect(daemon.tcp);
  try {
    return (await stat(c)).get('compression')!;
  } finally {
    c.close();
  }
}

/**
 * Writes an interrupted compaction at `path`: a big history in `.to_compress` (300 000 job
 * records over 3000 jobs, two rules), newer records in the log. Returns the QUERY lines of
 * the state they replay to, and their total size.
 */
function writeInterruptedCompaction(path: string): { expected: string[]; sizeBefore: number } {
  const expected = new Map<string, string>();
  const chunks: Buffer[] = [];
  const add = (into: Buffer[], rec: LogRecord) => into.push(encodeRecord(rec));
  for (let i = 0; i < 300_000; i++) {
    const id = `lo.${i % 3000}`;
    const execution = FAR_FUTURE_NS + BigInt(i);
    add(chunks, { t: 'job', job: { id, execution, status: 'planned' } });
    expected.set(id, `${id} planned ${execution}`);
  }
  add(chunks, { t: 'rule', rule: { id: 'lo.rule', pattern: 'lo.', runner: { type: 'shell', command: 'echo old' } } });
  add(chunks, { t: 'rule', rule: { id: 'lo.kept', pattern: 'lo.k.', runner: { type: 'direct', executable: '/bin/true', args: [] } } });
  writeFileSync(`${path}.to_compress`, Buffer.concat(chunks));
  const newer: Buffer[] = [];
  add(newer, { t: 'job', job: { id: 'lo.1', execution: 5n, status: 'executed' } });
  expected.set('lo.1', 'lo.1 executed 5');
  add(newer, { t: 'job.removed', id: 'lo.2' });
  expected.delete('lo.2');
  add(newer, { t: 'rule', rule: { id: 'lo.rule', pattern: 'lo.', runner: { type: 'shell', command: 'echo new' } } });
  writeFileSync(path, Buffer.concat(newer));
  return { expected: [...expected.values()].sort(), sizeBefore: statSync(`${path}.to_compress`).size + statSync(path).size };
}

const LEFTOVER_RULES = ['lo.kept lo.k. direct /bin/true', 'lo.rule lo. shell "echo new"'];

describe('compaction', function () {
  this.timeout(60000);

  it('shrinks a log of many overwrites; restarts give the same QUERY and LISTRULES', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    let daemon = await logfileDaemon(dir, { compression_interval: 0 });
    const c = await LineClient.connect(daemon.tcp);
    const commands: string[] = [];
    for (let round = 0; round < 100; round++) {
      for (let k = 0; k < 60; k++) commands.push(`SET cp.job.${k} ${FAR_FUTURE_NS + BigInt(round * 100 + k)}`);
      for (let k = 0; k < 5; k++) commands.push(`RULE SET cp.rule.${k} cp.${k}. shell "echo round ${round}"`);
      commands.push(`SET cp.gone.${round} ${FAR_FUTURE_NS}`, `REMOVE cp.gone.${round}`);
      commands.push(`RULE SET cp.gonerule.${round} x. direct /bin/true`, `REMOVERULE cp.gonerule.${round}`);
    }
    // same identifiers on both kinds: both survive compaction
    commands.push(`SET cp.same ${FAR_FUTURE_NS}`, 'RULE SET cp.same cp.same. direct /bin/true');
    await pipeline(c, commands);
    c.close();
    const state = await snapshot(daemon.tcp);
    expect(state.jobs).to.have.length(61);
    expect(state.rules).to.have.length(6);
    expect((await daemon.stop()).code).to.equal(0);
    const sizeBefore = statSync(path).size;

    daemon = await logfileDaemon(dir, { compression_interval: 1 });
    try {
      expect(await compression(daemon)).to.equal('idle');
      const done = await daemon.waitForLog((r) => r['msg'] === COMPACTED, 15000);
      expect(await compression(daemon)).to.equal('success');
      expect(done).to.include({ inputRecords: commands.length, outputRecords: 67, inputBytes: sizeBefore });
      const sizeAfter = statSync(path).size;
      expect(sizeAfter).to.equal(done['outputBytes']);
      expect(sizeAfter * 20).to.be.lessThan(sizeBefore);
      expect(existsSync(`${path}.to_compress`)).to.equal(false);
      expect(await snapshot(daemon.tcp)).to.deep.equal(state);
      expect((await daemon.stop()).code).to.equal(0);

      daemon = await logfileDaemon(dir, { compression_interval: 0 });
      expect(await snapshot(daemon.tcp)).to.deep.equal(state);
      await daemon.kill();
      daemon = await logfileDaemon(dir, { compression_interval: 0 });
      expect(await snapshot(daemon.tcp)).to.deep.equal(state);
    } finally {
      await daemon.stop();
    }
  });

  it('starts no fold child before a cycle, one for a cycle, which ends with the daemon, gracefully or killed', async function () {
    if (process.platform !== 'linux') this.skip(); // /proc
    const dir = tempDir();
    const idle = await logfileDaemon(dir, { compression_interval: 3600 });
    try {
      expect(descendantsRunning(idle.proc.pid!, 'fold-child.ts')).to.deep.equal([]); // the first cycle is an hour away
    } finally {
      await idle.stop();
    }
    for (const end of ['stop', 'kill'] as const) {
      const daemon = await logfileDaemon(dir, { compression_interval: 1 });
      const c = await LineClient.connect(daemon.tcp);
      await pipeline(c, [`SET fold.me ${FAR_FUTURE_NS}`, `SET fold.me ${FAR_FUTURE_NS + 1n}`]); // something to fold
      c.close();
      let children: number[] = [];
      await waitFor(() => (children = descendantsRunning(daemon.proc.pid!, 'fold-child.ts')).length > 0, 10_000, 'the fold child of the first cycle');
      expect(children).to.have.length(1);
      if (end === 'stop') expect((await daemon.stop()).code).to.equal(0);
      else await daemon.kill();
      await waitFor(() => !alive(children[0]!), 10000, `the fold child to end after a ${end}`);
    }
    // A kill in the middle of the cycle may leave a .to_compress, which the next start folds
    // whatever the interval (the test below): then a child runs for that fold, and no other.
    const leftover = existsSync(`${logfileOf(dir)}.to_compress`);
    const noCompaction = await logfileDaemon(dir, { compression_interval: 0 });
    try {
      if (leftover) await waitFor(() => descendantsRunning(noCompaction.proc.pid!, 'fold-child.ts').length === 0, 10_000, 'the leftover folded');
      expect(descendantsRunning(noCompaction.proc.pid!, 'fold-child.ts')).to.deep.equal([]); // nothing to fold, no child
    } finally {
      await noCompaction.stop();
    }
  });

  it('a leftover .to_compress is folded at startup (running, then success), before the timer', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    const { expected, sizeBefore } = writeInterruptedCompaction(path);

    // The default interval is an hour: only the leftover rule can make this compaction run.
    const daemon = await logfileDaemon(dir);
    try {
      const c = await LineClient.connect(daemon.tcp);
      const seen: string[] = [];
      for (;;) {
        const state = (await stat(c)).get('compression')!;
        if (seen[seen.length - 1] !== state) seen.push(state);
        if (state === 'success' || state === 'failure' || seen.length > 3) break;
      }
      c.close();
      expect(seen.join(' ')).to.be.oneOf(['idle running success', 'running success']);
      expect(logRecords(daemon, 'folding the leftover of an interrupted compaction')).to.have.length(1);
      expect(logRecords(daemon, COMPACTED)[0]).to.include({ inputRecords: 300_002, outputRecords: 3002 });
      expect(existsSync(`${path}.to_compress`)).to.equal(false);
      expect(statSync(path).size * 20).to.be.lessThan(sizeBefore);
      const state = await snapshot(daemon.tcp);
      expect(state.jobs).to.deep.equal(expected);
      expect(state.rules).to.deep.equal(LEFTOVER_RULES);
      await daemon.kill();
      const again = await logfileDaemon(dir);
      try {
        expect(await snapshot(again.tcp)).to.deep.equal(state);
        expect(logRecords(again, 'folding the leftover of an interrupted compaction')).to.have.length(0);
      } finally {
        await again.stop();
      }
    } finally {
      await daemon.stop();
    }
  });

  it('where chrt refuses SCHED_IDLE, compaction still runs (nice 19 only) and says why once', async function () {
    if (process.platform !== 'linux') this.skip(); // chrt is looked up on Linux only
    const dir = tempDir();
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    // what chrt does under a seccomp filter that forbids sched_setscheduler
    writeFileSync(join(bin, 'chrt'), '#!/bin/sh\necho "chrt: failed to set pid 0\'s policy: Operation not permitted" >&2\nexit 1\n', { mode: 0o755 });
    const path = logfileOf(dir);
    const { expected } = writeInterruptedCompaction(path);
    const daemon = await Daemon.start({ dir, workers: 1, config: { database: { persistence: 'logfile' } }, env: { PATH: `${bin}:${process.env['PATH']}` } });
    try {
      await daemon.waitForLog((r) => r['msg'] === COMPACTED, 20000);
      expect(logRecords(daemon, 'the compaction child could not start under chrt --idle; it runs at nice 19 only')).to.have.length(1);
      expect(logRecords(daemon, 'logfile compaction failed; it is retried at the next interval')).to.deep.equal([]);
      expect(existsSync(`${path}.to_compress`)).to.equal(false);
      expect((await snapshot(daemon.tcp)).jobs).to.deep.equal(expected);
    } finally {
      await daemon.stop();
    }
  });

  it('a graceful stop during a fold exits 0 and leaves the leftover for the next start', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    const { expected } = writeInterruptedCompaction(path);
    const daemon = await logfileDaemon(dir);
    const c = await LineClient.connect(daemon.tcp);
    await waitFor(async () => (await stat(c)).get('compression') === 'running', 10000, 'the fold to start');
    c.close();
    expect((await daemon.stop()).code).to.equal(0);
    expect(logRecords(daemon, 'compaction stopped; its leftover is folded at the next start')).to.have.length(1);
    expect(existsSync(`${path}.to_compress`)).to.equal(true);
    expect(existsSync(`${path}.compacting`)).to.equal(false);
    const again = await logfileDaemon(dir);
    try {
      const state = await snapshot(again.tcp);
      expect(state.jobs).to.deep.equal(expected);
      expect(state.rules).to.deep.equal(LEFTOVER_RULES);
      await again.waitForLog((r) => r['msg'] === COMPACTED, 15000);
      expect(existsSync(`${path}.to_compress`)).to.equal(false);
      expect(await snapshot(again.tcp)).to.deep.equal(state);
    } finally {
      await again.stop();
    }
  });

  it('STAT shows failure when a cycle fails; the next cycle folds what it left and succeeds', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    const daemon = await logfileDaemon(dir, { compression_interval: 1 });
    try {
      const c = await LineClient.connect(daemon.tcp);
      const commands: string[] = [];
      for (let i = 0; i < 500; i++) commands.push(`SET cf.${i % 50} ${FAR_FUTURE_NS + BigInt(i)}`);
      await pipeline(c, commands);
      // The compaction output cannot be created while a directory holds its name.
      mkdirSync(`${path}.compacting`);
      await waitFor(async () => (await stat(c)).get('compression') === 'failure', 15000, 'a failed compaction');
      expect(logRecords(daemon, 'logfile compaction failed; it is retried at the next interval').length).to.be.greaterThan(0);
      expect(existsSync(`${path}.to_compress`)).to.equal(true);
      await pipeline(c, [`SET cf.late ${FAR_FUTURE_NS}`, 'REMOVE cf.0']);
      const state = await snapshot(daemon.tcp);
      expect(state.jobs).to.have.length(50);
      rmdirSync(`${path}.compacting`);
      await waitFor(async () => (await stat(c)).get('compression') === 'success', 15000, 'a successful compaction');
      c.close();
      expect(existsSync(`${path}.to_compress`)).to.equal(false);
      expect(await snapshot(daemon.tcp)).to.deep.equal(state);
      await daemon.kill();
      const again = await logfileDaemon(dir, { compression_interval: 0 });
      try {
        expect(await snapshot(again.tcp)).to.deep.equal(state);
      } finally {
        await again.stop();
      }
    } finally {
      await daemon.stop();
    }
  });
});
