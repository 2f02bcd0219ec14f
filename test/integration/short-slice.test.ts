// The tick thread's short slice, asked of the kernel through perl: checked on real processes
// against what /proc/<pid>/sched reports, not against the helper's own answer.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { requestShortSlice } from '../../cluster/short-slice.ts';
import { waitFor } from '../helpers/client.ts';
import { customSlicesHere, schedSlice } from '../helpers/procfs.ts';

describe('cluster/short-slice', function () {
  this.timeout(10000);
  const children: ChildProcess[] = [];
  const start = (file: string, args: string[]): ChildProcess => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    children.push(child);
    return child;
  };
  afterEach(() => { for (const c of children.splice(0)) c.kill('SIGKILL'); });

  describe('where the kernel has custom slices', function () {
    before(function () {
      if (!customSlicesHere()) this.skip(); // Linux < 6.12, no perl, or no se.slice in /proc: the next block covers it
    });

    it('sets the slice of the given thread only, keeping its nice value', async () => {
      const niced = start('nice', ['-n', '5', 'sleep', '30']);
      await once(niced, 'spawn');
      const other = start('sleep', ['30']);
      await once(other, 'spawn');
      const before = schedSlice(other.pid!);
      expect(await requestShortSlice(niced.pid!, 250)).to.deep.equal({ applied: true, sliceUs: 250 });
      expect(schedSlice(niced.pid!)).to.equal(250_000);
      expect(getPriority(niced.pid!)).to.equal(5);
      expect(schedSlice(other.pid!)).to.equal(before);
    });

    it('is not inherited by processes the thread forks afterwards', async () => {
      const parent = start('sh', ['-c', 'read go; sleep 30 & echo $!; wait']);
      await once(parent, 'spawn');
      expect(await requestShortSlice(parent.pid!, 100)).to.deep.equal({ applied: true, sliceUs: 100 });
      parent.stdin!.write('go\n');
      const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
      const forked = Number(line.toString().trim());
      expect(schedSlice(parent.pid!)).to.equal(100_000);
      expect(schedSlice(forked)).to.be.a('number').and.not.equal(100_000);
    });

    it('leaves a thread under another policy alone', async () => {
      const idle = start('chrt', ['--idle', '0', 'sleep', '30']);
      await once(idle, 'spawn');
      await waitFor(() => readFileSync(`/proc/${idle.pid!}/comm`, 'utf8') === 'sleep\n', 5000, 'chrt to exec sleep');
      const before = schedSlice(idle.pid!);
      const outcome = await requestShortSlice(idle.pid!, 100);
      expect(outcome).to.deep.equal({ applied: false, why: 'the thread runs under scheduling policy 5, left alone' });
      expect(schedSlice(idle.pid!)).to.equal(before);
    });
  });

  it('says why where it cannot: a thread that does not exist', async () => {
    const outcome = await requestShortSlice(2 ** 22 + 7, 100); // above pid_max's ceiling
    expect(outcome.applied).to.equal(false);
    if (!outcome.applied) expect(outcome.why).to.match(/^(sched_getattr: No such process|no custom slices on )/);
  });

  it('says why where it cannot: no perl', async () => {
    const outcome = await requestShortSlice(process.pid, 100, '/nonexistent/perl');
    if (['x64', 'arm64'].includes(process.arch)) expect(outcome).to.deep.equal({ applied: false, why: '/nonexistent/perl is not installed' });
    else expect(outcome.applied).to.equal(false);
  });
});
