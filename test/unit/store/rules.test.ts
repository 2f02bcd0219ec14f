// RuleStore: longest-prefix matching through the index (trailing dot, catch-all, ties by
// smallest id, mid-id text), replacement with a new pattern, deletion, listings, and a
// randomized run against a brute-force matcher.
import { expect } from 'chai';
import type { Rule } from '../../../lib/domain/rule.ts';
import { RuleStore } from '../../../lib/store/rules.ts';
import { prng } from '../../helpers/prng.ts';
import { pageAll } from './page-all.ts';

function rule(id: string, pattern: string = id): Rule {
  return { id, pattern, runner: { type: 'shell', command: `echo ${id}` } };
}

describe('store/rules RuleStore', () => {
  let store: RuleStore;
  beforeEach(() => {
    store = new RuleStore();
  });

  it('clear() empties it: no rule, no match, and it is usable again', () => {
    store.put(rule('a.'));
    store.put(rule('a.b.'));
    store.clear();
    expect(store.size).to.equal(0);
    expect(store.match('a.b.c')).to.equal(undefined);
    store.put(rule('a.'));
    expect(store.match('a.b.c')?.id).to.equal('a.');
  });

  it('gets, replaces and deletes by identifier, returning previous values', () => {
    const r1 = rule('r', 'a.');
    const r2 = rule('r', 'b.');
    expect(store.put(r1)).to.equal(undefined);
    expect(store.get('r')).to.equal(r1);
    expect(store.put(r2)).to.equal(r1);
    expect(store.size).to.equal(1);
    expect(store.delete('r')).to.equal(r2);
    expect(store.delete('r')).to.equal(undefined);
    expect(store.get('r')).to.equal(undefined);
    expect(store.size).to.equal(0);
  });

  describe('match', () => {
    it('finds nothing in an empty store', () => {
      expect(store.match('a.b')).to.equal(undefined);
    });

    it('picks the longest matching pattern', () => {
      store.put(rule('short', 'app.'));
      store.put(rule('long', 'app.backup.'));
      store.put(rule('other', 'db.'));
      expect(store.match('app.backup.daily')!.id).to.equal('long');
      expect(store.match('app.web')!.id).to.equal('short');
      expect(store.match('db.x')!.id).to.equal('other');
      expect(store.match('cache.x')).to.equal(undefined);
    });

    it('matches a job id equal to the whole pattern', () => {
      store.put(rule('exact', 'app.job1'));
      expect(store.match('app.job1')!.id).to.equal('exact');
      expect(store.match('app.job')).to.equal(undefined);
    });

    it('a pattern ending in a dot does not match the text without the dot', () => {
      store.put(rule('dotted', 'app.'));
      expect(store.match('app')).to.equal(undefined);
      expect(store.match('apple')).to.equal(undefined);
      expect(store.match('app.')!.id).to.equal('dotted');
    });

    it('does not match the pattern text in the middle of an identifier', () => {
      store.put(rule('mid', 'backup.'));
      expect(store.match('app.backup.daily')).to.equal(undefined);
      expect(store.match('xbackup.daily')).to.equal(undefined);
    });

    it('the empty pattern is a catch-all that any other match beats', () => {
      store.put(rule('all', ''));
      expect(store.match('anything')!.id).to.equal('all');
      store.put(rule('a', 'a'));
      expect(store.match('anything')!.id).to.equal('a');
      expect(store.match('b')!.id).to.equal('all');
    });

    it('equal patterns: the smallest rule identifier wins, whatever the insertion order', () => {
      store.put(rule('zeta', 'app.'));
      store.put(rule('beta', 'app.'));
      store.put(rule('gamma', 'app.'));
      store.put(rule('Zed', 'app.')); // 'Z' < 'b' in byte order
      expect(store.match('app.x')!.id).to.equal('Zed');
      store.delete('Zed');
      expect(store.match('app.x')!.id).to.equal('beta');
      store.delete('beta');
      expect(store.match('app.x')!.id).to.equal('gamma');
      store.delete('gamma');
      store.delete('zeta');
      expect(store.match('app.x')).to.equal(undefined);
    });

    it('replacing a rule with a new pattern moves it in the index', () => {
      store.put(rule('r', 'app.'));
      store.put(rule('r', 'db.'));
      expect(store.match('app.x')).to.equal(undefined);
      expect(store.match('db.x')!.id).to.equal('r');
      store.put(rule('r', 'db.'));
      expect(store.match('db.x')!.id).to.equal('r');
    });

    it('replacing the runner under the same pattern returns the new rule', () => {
      store.put(rule('r', 'app.'));
      const updated: Rule = { id: 'r', pattern: 'app.', runner: { type: 'http', method: 'GET', url: 'http://x/' } };
      store.put(updated);
      expect(store.match('app.x')).to.equal(updated);
    });

    it('deleting one of two patterns of the same length keeps the other reachable', () => {
      store.put(rule('a', 'aa.'));
      store.put(rule('b', 'bb.'));
      store.put(rule('c', 'c'));
      store.delete('a');
      expect(store.match('bb.x')!.id).to.equal('b');
      expect(store.match('aa.x')).to.equal(undefined);
      store.delete('b');
      store.put(rule('d', 'dd.'));
      expect(store.match('dd.x')!.id).to.equal('d');
      expect(store.match('cx')!.id).to.equal('c');
    });

    it('removing a rule does not disturb a shorter fallback', () => {
      store.put(rule('long', 'app.backup.'));
      store.put(rule('short', 'app.'));
      store.delete('long');
      expect(store.match('app.backup.daily')!.id).to.equal('short');
    });

    it('agrees with a brute-force matcher over random puts, deletes and matches', () => {
      const rand = prng(42);
      const alphabet = ['a', 'b', '.'];
      const randomText = (max: number): string => {
        let s = '';
        const n = Math.floor(rand() * (max + 1));
        for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
        return s;
      };
      const model = new Map<string, Rule>();
      const brute = (jobId: string): string | undefined => {
        let best: Rule | undefined;
        for (const r of model.values()) {
          if (!jobId.startsWith(r.pattern)) continue;
          if (best === undefined || r.pattern.length > best.pattern.length
            || (r.pattern.length === best.pattern.length && r.id < best.id)) best = r;
        }
        return best?.id;
      };
      for (let step = 0; step < 5000; step++) {
        const id = `r${Math.floor(rand() * 60)}`;
        const r = rand();
        if (r < 0.4) {
          const next = rule(id, randomText(4));
          expect(store.put(next)).to.equal(model.get(id));
          model.set(id, next);
        } else if (r < 0.55) {
          expect(store.delete(id)).to.equal(model.get(id));
          model.delete(id);
        } else {
          const jobId = randomText(7);
          expect(store.match(jobId)?.id, `match(${JSON.stringify(jobId)})`).to.equal(brute(jobId));
        }
        expect(store.size).to.equal(model.size);
      }
      // White-box: the length list must stay exact, or match() slows down as rules churn.
      const lengths = (store as unknown as { lengths: number[] }).lengths;
      const expected = [...new Set([...model.values()].map((r) => r.pattern.length))].sort((a, b) => b - a);
      expect(lengths).to.deep.equal(expected);
    });
  });

  describe('page', () => {
    beforeEach(() => {
      for (const id of ['app.a', 'app.b', 'team1.x', 'team2.x']) store.put(rule(id, `p.${id}`));
    });

    const listed = (prefix: string, scope: string) => pageAll(store, prefix, scope).map((r) => r.id).sort();

    it('filters by rule-id prefix, not by pattern', () => {
      expect(listed('', '')).to.deep.equal(['app.a', 'app.b', 'team1.x', 'team2.x']);
      expect(listed('app.', '')).to.deep.equal(['app.a', 'app.b']);
      expect(listed('p.', '')).to.deep.equal([]);
    });

    it('restricts to the scope', () => {
      expect(listed('', 'team1.')).to.deep.equal(['team1.x']);
      expect(listed('team', 'team2.')).to.deep.equal(['team2.x']);
      expect(listed('app.', 'team1.')).to.deep.equal([]);
    });
  });
});
