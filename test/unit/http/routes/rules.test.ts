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
