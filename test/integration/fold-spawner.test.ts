// The spawner of the compaction children (cluster/fold-spawner.ts), with a stand-in child: it
// gives successive children one IPC channel, so a Node child's exit must close its descriptor
// of the channel without shutting the socket down (else the primary reads EOF, 'disconnect',
// and no later child can answer); and a terminal's signals to the process group must not end
// the spawner, while its children keep the default dispositions. The spawner as FoldProcess
// uses it: fold-process.test.ts.
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SPAWNER_NAME, SpawnerLauncher, type FoldChildEvents } from '../../cluster/fold-spawner.ts';
import type { FromFoldChild } from '../../cluster/ipc/fold-messages.ts';
import { waitFor } from '../helpers/client.ts';
import { Daemon } from '../helpers/daemon.ts';
import { alive, childPids, cmdline } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';

// Says it is ready, then ends by itself, or stays, as the test names for its generation.
const CHILD = `const gen = Number(process.argv[2]);
const how = process.env.HOW_BY_GEN.split(',')[gen - 1];
process.send({ t: 'ready', gen, how }, () => {
  if (how === 'exit') process.exit(0);
  if (how === 'disconnect') process.disconnect(); // closes its end of the channel, then its program ends
  if (how === 'stay') setInterval(() => {}, 1000);
});`;

interface Seen {
  readonly messages: FromFoldChild[];
  readonly ends: { message: string; own: boolean }[];
  readonly events: FoldChildEvents;
}

function seen(): Seen {
  const messages: FromFoldChild[] = [];
  const ends: { message: string; own: boolean }[] = [];
  return { messages, ends, events: { message: (msg) => messages.push(msg), exit: (err, own) => ends.push({ message: err.message, own }) } };
}

/** Runs body with a launcher whose children run CHILD, ending as `hows` says (one per generation). */
async function withLauncher(hows: string[], body: (launcher: SpawnerLauncher) => Promise<void>): Promise<void> {
  const entry = join(tempDir(), 'child.cjs');
  writeFileSync(entry, CHILD);
  process.env['HOW_BY_GEN'] = hows.join(','); // the spawner's environment is this process's
  const launcher = new SpawnerLauncher('/bin/sh', entry, null, undefined);
  delete process.env['HOW_BY_GEN'];
  try {
    await body(launcher);
  } finally {
    await launcher.close();
  }
}

const ignored = (pid: number): bigint => BigInt(`0x${/^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]}`);
const SIGINT_BIT = 1n << 1n;

describe('cluster/fold-spawner', function () {
  before(function () {
    if (process.platform !== 'linux') this.skip(); // /proc
  });

  it('a child that exits by itself leaves the shared channel open: the next child answers on it', async () => {
    const hows = ['exit', 'disconnect', 'end of program', 'exit'];
    await withLauncher(hows, async (launcher) => {
      const spawner = launcher.pid!;
      for (const [i, how] of hows.entries()) {
        const gen = i + 1;
        const { messages, ends, events } = seen();
        await launcher.launch(gen, false, events).exited;
        expect(messages, `child ${gen}'s message`).to.deep.equal([{ t: 'ready', gen, how }]);
        expect(ends).to.deep.equal([{ message: 'the compaction child exited (code 0) without a result', own: true }]);
      }
      expect(launcher.pid).to.equal(spawner);
    });
  });

  it('ignores SIGINT (a terminal\'s, to the whole group), which still ends its child', async () => {
    await withLauncher(['stay'], async (launcher) => {
      const spawner = launcher.pid!;
      const { messages, ends, events } = seen();
      const child = launcher.launch(1, false, events);
      await waitFor(() => messages.length > 0 && child.pid !== undefined, 10_000, 'the child');
      expect(ignored(spawner) & SIGINT_BIT).to.equal(SIGINT_BIT);
      expect(ignored(child.pid!) & SIGINT_BIT).to.equal(0n);
      process.kill(spawner, 'SIGINT');
      process.kill(child.pid!, 'SIGINT');
      await child.exited;
      expect(ends).to.deep.equal([{ message: 'the compaction child exited (SIGINT) without a result', own: false }]);
      expect(alive(spawner)).to.equal(true);
      expect(launcher.pid).to.equal(spawner);
    });
  });

  it('the daemon forks one at startup where there is a log to compact, and none in memory mode', async () => {
    const spawners = (daemon: Daemon): number[] => childPids(daemon.proc.pid!).filter((c) => cmdline(c).includes(SPAWNER_NAME));
    const withLog = await Daemon.start({ config: { database: { persistence: 'logfile' } } });
    try {
      expect(spawners(withLog)).to.have.length(1);
    } finally {
      await withLog.stop();
    }
    const inMemory = await Daemon.start({ config: { database: { persistence: 'memory' } } });
    try {
      expect(spawners(inMemory)).to.deep.equal([]);
    } finally {
      await inMemory.stop();
    }
  });
});

