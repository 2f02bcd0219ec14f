// bin/tickd run as a program (as systemd or an init script runs it): /bin/sh reads its first
// lines and exec(2)s Node on it, so the process started is the daemon itself, with no
// launcher beside it (tickd(8) Processes), and it stops on SIGTERM with status 0. In a clone
// the daemon's processes share tickd's compile cache, which the jobs' environment does not
// carry (cluster/compile-cache.ts).
import { expect } from 'chai';
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, TICKD } from '../helpers/daemon.ts';
import { LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { childPids, cmdline } from '../helpers/procfs.ts';
import { getJob, ok } from './logfile-helpers.ts';

describe('bin/tickd as a program', function () {
  before(function () {
    if (process.platform !== 'linux') this.skip(); // /proc
  });

  it('is the daemon itself: Node exec(2)ed on bin/tickd, no launcher process, SIGTERM stops it with 0', async () => {
    const daemon = await Daemon.start({ asProgram: true });
    try {
      const pid = daemon.proc.pid!;
      expect(readlinkSync(`/proc/${pid}/exe`)).to.match(/\/node$/); // not /bin/sh
      expect(cmdline(pid)).to.include(TICKD);
      // Its children are the daemon's roles, none another tickd (a launcher's child would be).
      for (const child of childPids(pid)) expect(cmdline(child).some((a) => a.endsWith('bin/tickd'))).to.equal(false);
      const c = await LineClient.connect(daemon.tcp);
      expect(await c.request('s', 'SET l.1 2030-01-01 00:00:00')).to.deep.equal(['s OK']);
      c.close();
    } finally {
      expect(await daemon.stop()).to.deep.equal({ code: 0, signal: null });
    }
  });

  it('keeps tickd\'s compile cache out of the environment of jobs', async () => {
    const daemon = await Daemon.start({ asProgram: true });
    try {
      // The primary's children get it (/proc/<pid>/environ is what a process started with).
      const [worker] = childPids(daemon.proc.pid!);
      expect(readFileSync(`/proc/${worker}/environ`, 'utf8').split('\0')).to.include(`NODE_COMPILE_CACHE=${join(TICKD, '..', '..', 'node_modules', '.cache', 'tickd')}`);
      const c = await LineClient.connect(daemon.tcp);
      const out = join(daemon.dir, 'env.out');
      await ok(c, `RULE SET e e. shell "echo cache=\${NODE_COMPILE_CACHE-unset} > ${out}"`);
      await ok(c, `SET e.1 ${nowNs()}`);
      await waitFor(async () => (await getJob(c, 'e.1')).startsWith('executed'), 10_000, 'e.1 executed');
      expect(readFileSync(out, 'utf8')).to.equal('cache=unset\n');
      c.close();
    } finally {
      await daemon.stop();
    }
  });

  // glibc reads GLIBC_TUNABLES when a process starts: the launcher fixes malloc's mmap threshold
  // (100 000 SCHEDULE SETs otherwise left the primary's heap 31-36 MB larger; bench row
  // schedules-rss), for the daemon's processes and not for its jobs.
  describe('a fixed malloc mmap threshold (GLIBC_TUNABLES)', () => {
    // What a process started with, as /proc shows it: glibc (2.36 here) parses the variable in
    // place, ending each tunable it read with a NUL, so `a:b` shows as `a` and `b`; rejoined.
    const tunables = (pid: number): string | undefined => {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const at = env.findIndex((e) => e.startsWith('GLIBC_TUNABLES='));
      if (at < 0) return undefined;
      const parts = [env[at]!.slice('GLIBC_TUNABLES='.length)];
      for (let i = at + 1; i < env.length && env[i]!.startsWith('glibc.'); i++) parts.push(env[i]!);
      return parts.join(':');
    };
    const jobSees = async (daemon: Daemon): Promise<string> => {
      const c = await LineClient.connect(daemon.tcp);
      try {
        const out = join(daemon.dir, 'tunables.out');
        await ok(c, `RULE SET t t. shell "echo tunables=\${GLIBC_TUNABLES-unset} > ${out}"`);
        await ok(c, `SET t.1 ${nowNs()}`);
        await waitFor(async () => (await getJob(c, 't.1')).startsWith('executed'), 10_000, 't.1 executed');
        return readFileSync(out, 'utf8');
      } finally {
        c.close();
      }
    };

    for (const asProgram of [true, false]) {
      it(`is given to the primary, its workers and runner child, not to jobs (${asProgram ? 'as a program' : 'node bin/tickd'})`, async () => {
        const daemon = await Daemon.start({ asProgram, env: { GLIBC_TUNABLES: '' } });
        try {
          const pid = daemon.proc.pid!;
          expect(tunables(pid)).to.equal('glibc.malloc.mmap_threshold=131072');
          expect(await jobSees(daemon)).to.equal('tunables=unset\n');
          const children = childPids(pid);
          expect(children.length).to.be.at.least(2); // a worker and the runner child
          for (const child of children) expect(tunables(child)).to.equal('glibc.malloc.mmap_threshold=131072');
        } finally {
          expect(await daemon.stop()).to.deep.equal({ code: 0, signal: null });
        }
      });
    }

    it('keeps what the user gave: added to other tunables, which jobs still get; a threshold of theirs kept as it is', async () => {
      let daemon = await Daemon.start({ env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' } });
      try {
        expect(tunables(daemon.proc.pid!)).to.equal('glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=131072');
        expect(await jobSees(daemon)).to.equal('tunables=glibc.malloc.arena_max=2\n');
      } finally {
        await daemon.stop();
      }
      daemon = await Daemon.start({ asProgram: true, env: { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' } });
      try {
        expect(tunables(daemon.proc.pid!)).to.equal('glibc.malloc.mmap_threshold=65536');
        expect(await jobSees(daemon)).to.equal('tunables=glibc.malloc.mmap_threshold=65536\n');
      } finally {
        await daemon.stop();
      }
    });
  });

  // V8 sizes the young generation at a process's start only: uncapped, a busy primary's scavenges
  // held its tick 45-52 ms (bench row schedules-spread). The launcher gives the cap.
  describe('a capped young generation (--max-semi-space-size=2)', () => {
    const semi = (pid: number): string[] => cmdline(pid).filter((a) => a.startsWith('--max-semi-space-size'));

    for (const asProgram of [true, false]) {
      it(`is given to the primary and its workers, same pid (${asProgram ? 'as a program' : 'node bin/tickd'})`, async () => {
        const daemon = await Daemon.start({ asProgram });
        try {
          const pid = daemon.proc.pid!;
          expect(semi(pid)).to.deep.equal(['--max-semi-space-size=2']);
          const workers = childPids(pid).filter((c) => cmdline(c).some((a) => a.endsWith('worker.ts')));
          expect(workers).to.not.deep.equal([]);
          for (const w of workers) expect(semi(w)).to.deep.equal(['--max-semi-space-size=2']);
        } finally {
          expect(await daemon.stop()).to.deep.equal({ code: 0, signal: null });
        }
      });
    }

    it('is not given where the user chose one (NODE_OPTIONS)', async () => {
      const daemon = await Daemon.start({ env: { NODE_OPTIONS: '--max-semi-space-size=8' } });
      try {
        expect(semi(daemon.proc.pid!)).to.deep.equal([]);
      } finally {
        await daemon.stop();
      }
    });
  });
});
