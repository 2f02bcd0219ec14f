// The console's pure retry helpers (lib/http/ui/console/retry-format.js, a browser ES
// module that Node imports as is): a rule's options on one line each, the option inputs from a
// rule (Edit) and back to PUT /rules/{id} members (Save keeps what Edit filled in), a job's
// attempt number and one history entry's cells. Rules and jobs come as the console reads them:
// parseExact turns every integer into its decimal string, fractions stay numbers.
import { expect } from 'chai';

interface RetryFormat {
  OPTION_INPUTS: string[];
  retryText(retry: unknown): string;
  optionDetails(rule: unknown): Array<[string, string, string]>;
  optionFormValues(rule: unknown): Record<string, string>;
  optionsBody(form: Record<string, string>): Record<string, unknown>;
  attemptText(job: unknown): string;
  attemptCells(a: unknown): Record<string, unknown>;
}

// Through a URL so the type checker does not look for declarations of a plain .js module.
const MODULE = new URL('../../../../../lib/http/ui/console/retry-format.js', import.meta.url).href;
const FORMAT = new URL('../../../../../lib/http/ui/console/format.js', import.meta.url).href;

// GET /rules/opts as the HTTP API writes it (every retry field written out).
const OPTS_TEXT = '{"id":"opts","pattern":"opts.","runner":{"type":"shell","command":"exit 1"},'
  + '"retry":{"attempts":4,"backoff":"exponential","delay":"500ms","factor":1.5,"max_delay":"30s","jitter":0.1},'
  + '"concurrency":2,"rate":{"limit":10,"per":"1m"},"on":["db","eu"]}';

describe('http/ui/console/retry-format.js', () => {
  let f: RetryFormat;
  let opts: Record<string, unknown>;
  before(async () => {
    f = (await import(MODULE)) as RetryFormat;
    opts = ((await import(FORMAT)) as { parseExact(text: string): Record<string, unknown> }).parseExact(OPTS_TEXT);
  });

  it('retryText: attempts, backoff with its delay, factor and cap, and a jitter that is not 0', () => {
    expect(f.retryText(opts['retry'])).to.equal('4 attempts · exponential 500ms ×1.5 (max 30s) · jitter 0.1');
    expect(f.retryText({ attempts: '3', backoff: 'fixed', delay: '2s', max_delay: '1h', jitter: '0' })).to.equal('3 attempts · fixed 2s (max 1h)');
    expect(f.retryText({ attempts: '1', backoff: 'exponential', delay: '0s', factor: '2', max_delay: '1h', jitter: '0' })).to.equal('1 attempt (no retry)');
  });

  it('optionDetails: one entry per option the rule has, none for a rule without', () => {
    expect(f.optionDetails(opts)).to.deep.equal([
      ['retry', 'retry', '4 attempts · exponential 500ms ×1.5 (max 30s) · jitter 0.1'],
      ['concurrency', 'concurrency', '2'],
      ['rate', 'rate', '10 per 1m'],
      ['on', 'on nodes tagged', 'db, eu'],
    ]);
    expect(f.optionDetails({ id: 'plain', pattern: '', runner: { type: 'shell', command: 'true' } })).to.deep.equal([]);
  });

  it('Edit then Save gives the API back the options it wrote', () => {
    const values = f.optionFormValues(opts);
    expect(values).to.deep.equal({
      attempts: '4', backoff: 'exponential', delay: '500ms', factor: '1.5', max_delay: '30s', jitter: '0.1', on: '',
      concurrency: '2', rate_limit: '10', rate_per: '1m', tags: 'db,eu',
    });
    expect(Object.keys(values)).to.deep.equal(f.OPTION_INPUTS);
    // Exactly the members the API wrote (as JSON, numbers as numbers).
    const { retry, concurrency, rate, on } = JSON.parse(OPTS_TEXT) as Record<string, unknown>;
    expect(f.optionsBody(values)).to.deep.equal({ retry, concurrency, rate, on });
  });

  it('a rule without options empties every input, and empty inputs send no option at all', () => {
    const values = f.optionFormValues({ id: 'plain', pattern: '', runner: { type: 'shell', command: 'true' } });
    expect(Object.values(values).every((v) => v === '')).to.equal(true);
    expect(f.optionsBody(values)).to.deep.equal({});
  });

  it('optionsBody sends a group when any of its inputs is filled, values as typed when they are not numbers', () => {
    const empty = Object.fromEntries(f.OPTION_INPUTS.map((n) => [n, '']));
    expect(f.optionsBody({ ...empty, attempts: ' many ' })).to.deep.equal({ retry: { attempts: 'many' } });
    expect(f.optionsBody({ ...empty, backoff: 'fixed' })).to.deep.equal({ retry: { backoff: 'fixed' } });
    expect(f.optionsBody({ ...empty, jitter: '1e-7', factor: 'x' })).to.deep.equal({ retry: { factor: 'x', jitter: 1e-7 } });
    expect(f.optionsBody({ ...empty, rate_per: '1s' })).to.deep.equal({ rate: { per: '1s' } });
    expect(f.optionsBody({ ...empty, concurrency: '12345678901' })).to.deep.equal({ concurrency: '12345678901' });
  });

  it('optionsBody leaves the factor out with fixed backoff (the API refuses it there)', () => {
    const values = { ...f.optionFormValues(opts), backoff: 'fixed' };
    expect(f.optionsBody(values)['retry']).to.deep.equal({ attempts: 4, backoff: 'fixed', delay: '500ms', max_delay: '30s', jitter: 0.1 });
    expect(f.optionFormValues({ retry: { attempts: '2', backoff: 'fixed', delay: '1s', max_delay: '1h', jitter: '0' } })['factor']).to.equal('');
  });

  it('on: shown after the backoff, one comma-separated input, sent back as the list it was', () => {
    const rule = { retry: { attempts: '3', backoff: 'fixed', delay: '100ms', max_delay: '1h', jitter: 0, on: ['5xx', '404', 'exit:75'] } };
    expect(f.retryText(rule.retry)).to.equal('3 attempts · fixed 100ms (max 1h) · on 5xx, 404, exit:75');
    const values = f.optionFormValues(rule);
    expect(values['on']).to.equal('5xx,404,exit:75');
    expect((f.optionsBody(values)['retry'] as Record<string, unknown>)['on']).to.deep.equal(['5xx', '404', 'exit:75']);
    const empty = Object.fromEntries(f.OPTION_INPUTS.map((n) => [n, '']));
    // spaces around a class go; an empty class stays, for the API to refuse with its own words
    expect(f.optionsBody({ ...empty, attempts: '2', on: ' 5xx , 429,' })).to.deep.equal({ retry: { attempts: 2, on: ['5xx', '429', ''] } });
    expect(f.optionFormValues({ retry: { attempts: '2' } })['on']).to.equal('');
  });

  it('tags: the rule\'s own on (node tags), one comma-separated input sent back as the rule\'s on list, apart from retry', () => {
    const empty = Object.fromEntries(f.OPTION_INPUTS.map((n) => [n, '']));
    expect(f.optionsBody({ ...empty, tags: ' db , eu,' })).to.deep.equal({ on: ['db', 'eu', ''] });
    expect(f.optionsBody({ ...empty, tags: 'db', on: '5xx', attempts: '2' })).to.deep.equal({ retry: { attempts: 2, on: ['5xx'] }, on: ['db'] });
    expect(f.optionFormValues({ retry: { attempts: '2', on: ['5xx'] } })['tags']).to.equal('');
    expect(f.optionDetails({ on: ['gpu'] })).to.deep.equal([['on', 'on nodes tagged', 'gpu']]);
  });

  it('attemptText and attemptCells: the number, and an entry with its durations made short', () => {
    expect(f.attemptText({ attempt: '0' })).to.equal('0 (not run yet)');
    expect(f.attemptText({ attempt: '3' })).to.equal('3');
    expect(f.attemptCells({ attempt: '2', started_ns: '1', lateness_ns: '1500000', held_ns: '0', duration_ns: '2000000000', success: false, summary: 'HTTP 503' }))
      .to.deep.equal({ attempt: '2', lateness: '1.5 ms', held: '0 ns', duration: '2 s', summary: 'HTTP 503', success: false });
  });
});
