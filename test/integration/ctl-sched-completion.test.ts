// `tickd ctl`'s bash completion of the sched subcommands and of `sched set`'s keys, run in a
// real bash (a process: not a unit test).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { completionScript } from '../../lib/ctl/completion.ts';

describe('ctl sched: bash completion', () => {
  it('bash completes sched subcommands and keys', function () {
    if (spawnSync('bash', ['-c', 'true']).status !== 0) this.skip();
    const script = completionScript('bash');
    const run = (line: string): string[] => {
      const words = line.split(' ');
      const probe = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _tickd; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const r = spawnSync('bash', ['-c', probe], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
      return r.stdout.split('\n').filter((l) => l !== '');
    };
    expect(run('tickd ctl sched re')).to.deep.equal(['resume']);
    expect(run('tickd ctl sched set nightly c')).to.deep.equal(['cron=', 'catchup=']);
    expect(run('tickd ctl sched set nightly cron=x o')).to.deep.equal(['overlap=']);
    expect(run('tickd ctl help s')).to.deep.equal(['sched', 'stat']);
  });
});
