// RULE SET of a rule whose options hold `on` (the node tags its jobs require) asks for format 6
// (lib/engine/commands/rule-set.ts): in a cluster with a node behind it, the rule is refused,
// naming `on`, and nothing is stored; without `on`, a rule asks for what it asked before.
import { expect } from 'chai';
import type { StatValues } from '../../../lib/domain/stat.ts';
import { Engine } from '../../../lib/engine/engine.ts';
import type { Journal, LogRecord } from '../../../lib/engine/journal.ts';
import { JobStore } from '../../../lib/store/jobs.ts';
import { RuleStore } from '../../../lib/store/rules.ts';

const S = 1_000_000_000n;
const RETRY = { attempts: 2, backoff: 'fixed', delay: S, factor: 2, maxDelay: 3600n * S, jitter: 0 } as const;
const runner = { type: 'shell', command: 'true' } as const;

function engineBehind(at: number): { engine: Engine; rules: RuleStore; asked: number[]; journal: LogRecord[] } {
  const asked: number[] = [];
  const journal: LogRecord[] = [];
  const sink: Journal = { append: (rec) => { journal.push(rec); }, flush: async () => {}, close: async () => {} };
  const rules = new RuleStore();
  const engine = new Engine({
    jobs: new JobStore(), rules, journal: sink, dispatch: () => {}, stat: () => ({}) as StatValues, onPersistError: () => {},
    formatRefused: (needs) => { asked.push(needs); return needs > at ? `needs every node of the cluster at tickd format ${needs} or later` : null; },
  });
  return { engine, rules, asked, journal };
}

describe('engine: RULE SET of a rule with on', () => {
  it('asks for format 6 with on (with or without retry.on), what it asked before without; refused, it names on and stores nothing', () => {
    const { engine, rules, asked, journal } = engineBehind(5);
    expect(engine.execute({ op: 'rule.set', rule: { id: 'a', pattern: 'a.', runner } }).ok).to.equal(true);
    expect(engine.execute({ op: 'rule.set', rule: { id: 'b', pattern: 'b.', runner, options: { retry: { ...RETRY, on: [{ kind: '5xx', value: 0 }] } } } }).ok).to.equal(true);
    expect(engine.execute({ op: 'rule.set', rule: { id: 'c', pattern: 'c.', runner, options: { on: ['db'] } } }))
      .to.deep.equal({ ok: false, code: 'invalid_args', message: 'on: needs every node of the cluster at tickd format 6 or later' });
    expect(engine.execute({ op: 'rule.set', rule: { id: 'd', pattern: 'd.', runner, options: { retry: { ...RETRY, on: [{ kind: '5xx', value: 0 }] }, on: ['db'] } } }))
      .to.deep.equal({ ok: false, code: 'invalid_args', message: 'on: needs every node of the cluster at tickd format 6 or later' });
    expect(asked).to.deep.equal([5, 6, 6]);
    expect([rules.get('c'), rules.get('d')]).to.deep.equal([undefined, undefined]);
    expect(journal.flatMap((r) => (r.t === 'rule' ? [r.rule.id] : []))).to.deep.equal(['a', 'b']);
  });

  it('taken once every node reads format 6', () => {
    const { engine, rules } = engineBehind(6);
    expect(engine.execute({ op: 'rule.set', rule: { id: 'c', pattern: 'c.', runner, options: { on: ['db', 'eu'] } } }).ok).to.equal(true);
    expect(rules.get('c')?.options).to.deep.equal({ on: ['db', 'eu'] });
  });
});
