// `tickd dump LOGFILE [--format text|json] [--compact] [--follow]`
// (tickd(8) THE DUMP SUBCOMMAND) on logfiles the real daemon wrote: text lines are protocol
// commands (fed back to a fresh daemon they rebuild the same state), JSON carries exact
// integers, --compact keeps the last state per (kind, identifier), --follow prints what is
// appended after it started, across a compaction.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { encodeRecord } from '../../lib/logfile/codec.ts';
import { join } from 'node:path';
import { Daemon, runTickd, TICKD } from '../helpers/daemon.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { FAR_FUTURE_NS, logfileDaemon, logfileOf, ok, snapshot, type Snapshot } from './logfile-helpers.ts';

const BIG = FAR_FUTURE_NS + 123_456_789n; // far above 2^53: a float would round it

/** The history the dump is checked against: every kind of record, quoting, overwrites. */
const HISTORY = [
  'RULE SET d.shell d.sh. shell "printf \\"%s\\" \\\\ done"',
  'RULE SET d.direct d.di. direct /bin/echo "two words" "" "#hash" plain',
  'RULE SET d.http d.ht. http PUT http://127.0.0.1:9/hook',
  'RULE SET d.awf d.aw. awf report --input "title=a b" --input x=1',
  'RULE SET d.amqp d.am. amqp amqp://u:p@localhost:5672/vh ex rk',
  'RULE SET d.redis d.re. redis redis://localhost:6379/2 PUBLISH chan',
  'RULE SET d.shell d.sh. shell "echo replaced"',
  'RULE SET d.gone d.go. shell x',
  'REMOVERULE d.gone',
  `SET d.job.big ${BIG}`,
  `SET d.job.moved ${FAR_FUTURE_NS}`,
  `SET d.job.moved ${FAR_FUTURE_NS + 7n}`,
  `SET d.job.gone ${FAR_FUTURE_NS}`,
  'REMOVE d.job.gone',
  `SET d.same ${FAR_FUTURE_NS + 1n}`,
  'RULE SET d.same d.same. direct /bin/true',
  'SET d.job.date "2100-06-01 12:00:00"',
];

/** Dump text lines are `<request_id> <command...>` (the request id names the status or kind): the commands. */
function asCommands(dumpText: string): string[] {
  return dumpText.split('\n').filter((l) => l !== '').map((l) => l.slice(l.indexOf(' ') + 1));
}

/** Feeds `commands` to a fresh memory-mode daemon; each must be answered OK. */
async function rebuild(commands: string[]): Promise<Snapshot> {
  const daemon = await Daemon.start();
  try {
    const c = await LineClient.connect(daemon.tcp);
    for (const cmd of commands) await ok(c, cmd);
    c.close();
    return await snapshot(daemon.tcp);
  } finally {
    await daemon.stop();
  }
}

const WAIT_MS = 30_000;

describe('tickd dump', function () {
  this.timeout(30000);
  const dir = tempDir();
  const path = logfileOf(dir);
  let state: Snapshot;

  before(async () => {
    const daemon = await logfileDaemon(dir);
    try {
      const c = await LineClient.connect(daemon.tcp);
      for (const cmd of HISTORY) await ok(c, cmd);
      c.close();
      state = await snapshot(daemon.tcp);
    } finally {
      expect((await daemon.stop()).code).to.equal(0);
    }
  });

  it('text: one line per record, each a protocol command; fed back they rebuild the same state', async () => {
    const r = await runTickd(['dump', path]);
    expect(r.code).to.equal(0);
    expect(r.stderr).to.equal('');
    const commands = asCommands(r.stdout);
    expect(commands).to.have.length(HISTORY.length);
    expect(commands[0]).to.equal('RULE SET d.shell d.sh. shell "printf \\"%s\\" \\\\ done"');
    expect(commands[8]).to.equal('REMOVERULE d.gone');
    expect(r.stdout).to.include(`planned SET d.job.big ${BIG}\n`);
    expect(r.stdout).to.include('planned SET d.job.date 4115534400000000000\n');
    expect(await rebuild(commands)).to.deep.equal(state);
  });

  it('json: one object per line, executions as exact integers in the raw text', async () => {
    const r = await runTickd(['dump', path, '--format', 'json']);
    expect(r.code).to.equal(0);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    expect(lines).to.have.length(HISTORY.length);
    for (const l of lines) expect(() => JSON.parse(l)).to.not.throw();
    expect(lines).to.include(`{"type":"job","id":"d.job.big","execution":${BIG},"status":"planned"}`);
    expect(lines).to.include('{"type":"rule","id":"d.amqp","pattern":"d.am.","runner":{"type":"amqp","dsn":"amqp://u:p@localhost:5672/vh","exchange":"ex","routing_key":"rk"}}');
    expect(lines).to.include('{"type":"rule","id":"d.direct","pattern":"d.di.","runner":{"type":"direct","executable":"/bin/echo","args":["two words","","#hash","plain"]}}');
    expect(lines).to.include('{"type":"job.removed","id":"d.job.gone"}');
    expect(lines).to.include('{"type":"rule.removed","id":"d.gone"}');
  });

  it('--compact: the last state per (kind, identifier), removed entries left out', async () => {
    const r = await runTickd(['dump', path, '--compact']);
    expect(r.code).to.equal(0);
    const commands = asCommands(r.stdout);
    expect(commands).to.have.length(state.jobs.length + state.rules.length);
    expect(commands.filter((l) => l.startsWith('REMOVE'))).to.deep.equal([]);
    // a job and a rule with the same identifier are two entries
    expect(commands).to.include(`SET d.same ${FAR_FUTURE_NS + 1n}`);
    expect(commands).to.include('RULE SET d.same d.same. direct /bin/true');
    expect(commands).to.include(`SET d.job.moved ${FAR_FUTURE_NS + 7n}`);
    expect(commands).to.include('RULE SET d.shell d.sh. shell "echo replaced"');
    expect(await rebuild(commands)).to.deep.equal(state);

    const json = await runTickd(['dump', path, '--compact', '--format', 'json']);
    expect(json.stdout.trim().split('\n')).to.have.length(commands.length);
  });

  it('a record that does not decode: the records before it, then exit 1 naming its offset', async () => {
    const damaged = join(dir, 'damaged');
    writeFileSync(damaged, Buffer.from([0, 0, 0, 2, 9, 9]));
    const r = await runTickd(['dump', damaged]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/record at byte offset 0 does not decode/);
  });

  /** Runs `tickd dump <file> --follow`; lines() is what it has printed so far. */
  function startFollow(file: string) {
    const proc = spawn(process.execPath, [TICKD, 'dump', file, '--follow'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => { out += chunk; });
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    return {
      lines: () => out.split('\n').filter((l) => l !== ''),
      stop: async () => { proc.kill('SIGKILL'); await exited; },
    };
  }

  it('--follow prints records appended after it started, and only them, across compactions', async function () {
    // Waits for conditions, each up to WAIT_MS: on a loaded machine (the suite's cluster tests
    // just before) a compaction cycle in the child took longer than 10 s to be seen.
    this.timeout(4 * 60_000);
    const daemon = await logfileDaemon(dir, { compression_interval: 1 });
    const follow = startFollow(path);
    try {
      await waitFor(() => follow.lines().length === HISTORY.length, WAIT_MS, 'the existing records');
      const c = await LineClient.connect(daemon.tcp);
      await ok(c, `SET d.follow.new ${BIG}`);
      await waitFor(() => follow.lines().length === HISTORY.length + 1, WAIT_MS, 'the new record');
      expect(follow.lines()[HISTORY.length]).to.equal(`planned SET d.follow.new ${BIG}`);

      // The daemon compacts every second here, whenever the log changed since the last cycle:
      // each change below is followed by a compaction, and nothing already shown may be
      // printed again.
      const compacted = () => daemon.stderr.filter((l) => l.includes('"logfile compacted"')).length;
      const expected = [`planned SET d.follow.new ${BIG}`];
      const changes = [`SET d.follow.c0 ${FAR_FUTURE_NS}`, 'REMOVERULE d.same', `SET d.follow.c1 ${FAR_FUTURE_NS}`];
      for (const change of changes) {
        const seen = compacted();
        await waitFor(() => compacted() > seen, WAIT_MS, `a compaction before ${change}`);
        await ok(c, change);
        expected.push(change.startsWith('SET') ? `planned ${change}` : `removed ${change}`);
        await waitFor(() => follow.lines().length >= HISTORY.length + expected.length, WAIT_MS, `${change} printed`);
      }
      const seen = compacted();
      await waitFor(() => compacted() > seen, WAIT_MS, 'a compaction after the last change');
      await ok(c, `SET d.follow.last ${FAR_FUTURE_NS}`);
      expected.push(`planned SET d.follow.last ${FAR_FUTURE_NS}`);
      c.close();
      await waitFor(() => follow.lines().length >= HISTORY.length + expected.length, WAIT_MS, 'the last record');
      expect(follow.lines().slice(HISTORY.length)).to.deep.equal(expected);
    } finally {
      await follow.stop();
      await daemon.stop();
    }
  });

  it('--follow does not repeat the history when rotation and swap both happen between two polls', async () => {
    // The file operations of one compaction cycle, done at once, with `.to_compress` left in
    // place (a cycle that has swapped but not yet unlinked it).
    const file = join(dir, 'follow-log');
    const job = (id: string, execution: bigint) => encodeRecord({ t: 'job', job: { id, execution, status: 'planned' } });
    writeFileSync(file, Buffer.concat([job('a', 1n), job('a', 2n), job('b', 3n)]));
    const follow = startFollow(file);
    try {
      await waitFor(() => follow.lines().length === 3, 10000, 'the existing records');
      renameSync(file, `${file}.to_compress`);
      writeFileSync(`${file}.compacting`, Buffer.concat([job('a', 2n), job('b', 3n), job('c', 4n), encodeRecord({ t: 'job.removed', id: 'b' })]));
      renameSync(`${file}.compacting`, file);
      await waitFor(() => follow.lines().length >= 5, 10000, 'the new records');
      expect(follow.lines().slice(3)).to.deep.equal(['planned SET c 4', 'removed REMOVE b']);
    } finally {
      await follow.stop();
    }
  });
});
