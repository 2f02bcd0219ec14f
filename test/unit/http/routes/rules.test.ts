import { expect } from 'chai';
import { ruleFromBody, ruleToJson } from '../../../../lib/http/routes/rules.ts';

describe('http/routes/rules ruleFromBody', () => {
  it('builds the rule from either runner form', () => {
    const objectForm = ruleFromBody('r.1', { pattern: 'a.', runner: { type: 'http', method: 'POST', url: 'http://h/x' } });
    const stringForm = ruleFromBody('r.1', { pattern: 'a.', runner: 'http', args: ['POST', 'http://h/x'] });
    expect(objectForm).to.deep.equal({ id: 'r.1', pattern: 'a.', runner: { type: 'http', method: 'POST', url: 'http://h/x' } });
    expect(stringForm).to.deep.equal(objectForm);
  });

  it('accepts the empty pattern and a body id equal to the path id (a GET result sent back)', () => {
    const rule = ruleFromBody('r', { pattern: '', runner: { type: 'shell', command: 'true' } });
    expect(rule).to.deep.equal({ id: 'r', pattern: '', runner: { type: 'shell', command: 'true' } });
    expect(ruleFromBody('r', ruleToJson(rule as never))).to.deep.equal(rule);
  });

  it('names what is wrong', () => {
    const shell = { type: 'shell', command: 'true' };
    expect(ruleFromBody('r', [])).to.equal('request body must be a JSON object');
    expect(ruleFromBody('r', null)).to.equal('request body must be a JSON object');
    expect(ruleFromBody('r', { runner: shell })).to.equal('pattern is required');
    expect(ruleFromBody('r', { pattern: 1, runner: shell })).to.equal('pattern must be a string');
    expect(ruleFromBody('r', { pattern: 'a b', runner: shell })).to.match(/^pattern contains invalid character space/);
    expect(ruleFromBody('r', { pattern: 'a' })).to.equal('runner is required');
    expect(ruleFromBody('r', { id: 'other', pattern: 'a', runner: shell })).to.match(/^id in the body/);
  });

  it('applies the shared runner validation (prefixed with runner:)', () => {
    expect(ruleFromBody('r', { pattern: 'a', runner: { type: 'http', method: 'GET', url: 'ftp://x' } })).to.match(/^runner: http url must start with http:\/\/ or https:\/\//);
    expect(ruleFromBody('r', { pattern: 'a', runner: { type: 'shell', command: '' } })).to.match(/^runner: shell command must not be empty/);
    expect(ruleFromBody('r', { pattern: 'a', runner: 'awf', args: ['wf', '--input', 'novalue'] })).to.match(/^runner: awf input 1 must be key=value/);
  });
});

describe('http/routes/rules options (retry, concurrency, rate)', () => {
  const shell = { type: 'shell', command: 'exit 1' };

  it('reads them into the rule, and a rule without them has no options member', () => {
    const rule = ruleFromBody('r', { pattern: 'a.', runner: shell, retry: { attempts: 3, delay: '2s' }, concurrency: 2, rate: { limit: 5, per: '1m' } });
    expect(rule).to.deep.equal({
      id: 'r', pattern: 'a.', runner: shell,
      options: {
        retry: { attempts: 3, backoff: 'exponential', delay: 2_000_000_000n, factor: 2, maxDelay: 3_600_000_000_000n, jitter: 0 },
        concurrency: 2, rate: { limit: 5, per: 60_000_000_000n },
      },
    });
    expect(Object.hasOwn(ruleFromBody('r', { pattern: 'a.', runner: shell }) as object, 'options')).to.equal(false);
  });

  it('writes them as members, every retry field out, and reads its own answer back', () => {
    const rule = ruleFromBody('r', { pattern: 'a.', runner: shell, retry: { attempts: 3, backoff: 'fixed', delay: '2s' }, rate: { limit: 5, per: '90s' } });
    const json = ruleToJson(rule as never);
    expect(json).to.deep.equal({
      id: 'r', pattern: 'a.', runner: shell,
      retry: { attempts: 3, backoff: 'fixed', delay: '2s', max_delay: '1h', jitter: 0 }, rate: { limit: 5, per: '1m30s' },
    });
    expect(ruleFromBody('r', json)).to.deep.equal(rule);
    expect(ruleToJson({ id: 'p', pattern: '', runner: { type: 'shell', command: 'true' } })).to.deep.equal({ id: 'p', pattern: '', runner: { type: 'shell', command: 'true' } });
  });

  it('names the member at fault; unknown members inside retry and rate are refused', () => {
    const bad = (extra: Record<string, unknown>): unknown => ruleFromBody('r', { pattern: 'a.', runner: shell, ...extra });
    expect(bad({ retry: { attempts: 3 } })).to.equal('retry.delay: is required when attempts is more than 1');
    expect(bad({ retry: 3 })).to.equal('retry: must be an object');
    expect(bad({ retry: null })).to.equal('retry: must be an object');
    expect(bad({ retry: { attempts: 2, delay: '1s', tries: 1 } })).to.match(/^retry\.tries: unknown field \(known: attempts, /);
    expect(bad({ concurrency: 0 })).to.equal('concurrency: must be an integer from 1 to 100000');
    expect(bad({ rate: { limit: 1, per: '1s', burst: 1 } })).to.equal('rate.burst: unknown field (known: limit, per)');
    expect(bad({ rate: { limit: 1 } })).to.equal('rate.per: is required with rate.limit');
    // The runner is read first, as before options existed.
    expect(ruleFromBody('r', { pattern: 'a.', concurrency: 0 })).to.equal('runner is required');
  });
});
