// Namespace enforcement (tickd-protocol(7) AUTHENTICATION): which commands a namespace denies,
// which it narrows, and that `*` and STAT pass untouched.
import { expect } from 'chai';
import { scopeCommand } from '../../../lib/auth/scope.ts';
import type { Command } from '../../../lib/domain/command.ts';
import type { Rule } from '../../../lib/domain/rule.ts';

const DENIED = { ok: false, code: 'auth_denied', message: 'insufficient namespace scope' };
const rule = (id: string, pattern: string): Rule => ({ id, pattern, runner: { type: 'shell', command: 'true' } });

describe('auth/scope', () => {
  it('* lets every command through unchanged (the same object)', () => {
    const cmds: Command[] = [
      { op: 'job.set', id: 'x.1', execution: 5n }, { op: 'job.get', id: 'x' }, { op: 'job.remove', id: 'y' },
      { op: 'job.list', prefix: '', scope: '', cursor: 0, limit: 10 }, { op: 'rule.set', rule: rule('r', '') }, { op: 'rule.get', id: 'r' },
      { op: 'rule.remove', id: 'r' }, { op: 'rule.list', prefix: 'q', scope: '', cursor: 0, limit: 10 }, { op: 'stat' },
    ];
    for (const c of cmds) expect(scopeCommand(c, '*'), c.op).to.equal(c);
  });

  it('single-identifier commands: allowed inside the namespace, denied outside', () => {
    for (const op of ['job.set', 'job.get', 'job.remove', 'rule.get', 'rule.remove'] as const) {
      const make = (id: string): Command => (op === 'job.set' ? { op, id, execution: 1n } : { op, id });
      const inside = make('a.x');
      expect(scopeCommand(inside, 'a.'), op).to.equal(inside);
      expect(scopeCommand(make('a.'), 'a.'), op).to.deep.equal(make('a.'));
      for (const outside of ['b.x', 'a', 'ab.x', 'x.a.y', 'A.x']) {
        expect(scopeCommand(make(outside), 'a.'), `${op} ${outside}`).to.deep.equal(DENIED);
      }
    }
  });

  it('RULE SET needs both the rule id and the pattern inside the namespace', () => {
    const ok = { op: 'rule.set', rule: rule('a.r', 'a.sub.') } as const;
    expect(scopeCommand(ok, 'a.')).to.equal(ok);
    for (const [id, pattern] of [['a.r', 'b.'], ['b.r', 'a.'], ['a.r', ''], ['a.r', 'a'], ['b.r', 'b.']]) {
      expect(scopeCommand({ op: 'rule.set', rule: rule(id!, pattern!) }, 'a.'), `${id} "${pattern}"`).to.deep.equal(DENIED);
    }
  });

  it('QUERY and LISTRULES are narrowed to the namespace, keeping the prefix', () => {
    expect(scopeCommand({ op: 'job.list', prefix: '', scope: '', cursor: 0, limit: 10 }, 'a.')).to.deep.equal({ op: 'job.list', prefix: '', scope: 'a.', cursor: 0, limit: 10 });
    expect(scopeCommand({ op: 'job.list', prefix: 'b.', scope: '', cursor: 0, limit: 10 }, 'a.')).to.deep.equal({ op: 'job.list', prefix: 'b.', scope: 'a.', cursor: 0, limit: 10 });
    expect(scopeCommand({ op: 'rule.list', prefix: '', scope: '', cursor: 0, limit: 10 }, 'b.')).to.deep.equal({ op: 'rule.list', prefix: '', scope: 'b.', cursor: 0, limit: 10 });
  });

  it('STAT is allowed whatever the namespace', () => {
    const stat: Command = { op: 'stat' };
    expect(scopeCommand(stat, 'nothing.')).to.equal(stat);
  });
});
