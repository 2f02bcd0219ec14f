// A rule's options (lib/domain/rule-options.ts): the HTTP members and the RULE SET tokens read
// into one shape with the same refusals, absent when none is given, and written back (JSON,
// tokens) so that reading them again gives the same options.
import { expect } from 'chai';
import {
  optionsFormat, optionsToJson, optionTokens, readOptionTokens, readRuleOptions, type OptionsResult, type RuleOptions,
} from '../../../lib/domain/rule-options.ts';
import { PLACEMENT_FORMAT, RETRIES_FORMAT, RETRY_ON_FORMAT } from '../../../lib/domain/format.ts';

const S = 1_000_000_000n;

function read(r: OptionsResult): RuleOptions | undefined {
  if ('field' in r) throw new Error(`${r.field}: ${r.error}`);
  return r.options;
}

function refused(r: OptionsResult): string {
  if (!('field' in r)) throw new Error('accepted');
  return `${r.field}: ${r.error}`;
}

describe('domain/rule-options', () => {
  it('no option given: undefined, never an empty object', () => {
    expect(read(readRuleOptions(undefined, undefined, undefined))).to.equal(undefined);
    expect(read(readOptionTokens([]))).to.equal(undefined);
    expect(optionTokens(undefined)).to.deep.equal([]);
    expect(optionsToJson(undefined)).to.deep.equal({});
  });

  it('HTTP members and RULE SET tokens read into the same options', () => {
    const http = read(readRuleOptions({ attempts: 5, delay: '1s', factor: 1.5, jitter: 0.2 }, 4, { limit: 10, per: '1m' }));
    expect(http).to.deep.equal({
      retry: { attempts: 5, backoff: 'exponential', delay: S, factor: 1.5, maxDelay: 3600n * S, jitter: 0.2 },
      concurrency: 4, rate: { limit: 10, per: 60n * S },
    });
    expect(read(readOptionTokens(['rate.per=1m', 'retry.jitter=0.2', 'concurrency=4', 'retry.factor=1.5', 'rate.limit=10', 'retry.delay=1s', 'retry.attempts=5'])))
      .to.deep.equal(http);
  });

  it('refuses HTTP members that are wrong, naming the field', () => {
    expect(refused(readRuleOptions([], undefined, undefined))).to.equal('retry: must be an object');
    expect(refused(readRuleOptions({ attempts: 2, delay: '1s', tries: 1 }, undefined, undefined))).to.match(/^retry\.tries: unknown field/);
    expect(refused(readRuleOptions(undefined, 2.5, undefined))).to.match(/^concurrency: must be an integer from 1 to 100000$/);
    expect(refused(readRuleOptions(undefined, true, undefined))).to.match(/^concurrency: /);
    expect(refused(readRuleOptions(undefined, undefined, 5))).to.equal('rate: must be an object with limit and per');
    expect(refused(readRuleOptions(undefined, undefined, { limit: 1, per: '1s', burst: 2 }))).to.match(/^rate\.burst: unknown field \(known: limit, per\)$/);
    expect(refused(readRuleOptions(undefined, undefined, { per: '1s' }))).to.match(/^rate\.limit: must be an integer/);
    expect(refused(readRuleOptions(undefined, undefined, { limit: 1 }))).to.equal('rate.per: is required with rate.limit');
    expect(refused(readRuleOptions(undefined, undefined, { limit: 1, per: 1000 }))).to.match(/^rate\.per: not a duration/);
    expect(refused(readRuleOptions(undefined, undefined, { limit: 1, per: '2d' }))).to.equal('rate.per: must be from 1ms to 1d');
  });

  it('refuses RULE SET tokens that are wrong, naming the option', () => {
    expect(refused(readOptionTokens(['concurrency=1', 'concurrency=2']))).to.equal('concurrency: given twice');
    expect(refused(readOptionTokens(['retry=3']))).to.match(/^retry: unknown option \(known: retry\.attempts, .* rate\.per, on\)$/);
    expect(refused(readOptionTokens(['retry.backoff=fixed']))).to.equal('retry.attempts: is required with any other retry option');
    expect(refused(readOptionTokens(['retry.attempts=2', 'retry.delay=1s', 'retry.factor=1e999']))).to.match(/^retry\.factor: must be a number/);
    expect(refused(readOptionTokens(['retry.attempts=2', 'retry.delay=1s', 'retry.jitter=-0.5']))).to.match(/^retry\.jitter: must be a number/);
  });

  it('writes JSON members and tokens that read back as the same options', () => {
    const cases: RuleOptions[] = [
      read(readRuleOptions({ attempts: 1 }, undefined, undefined))!,
      read(readRuleOptions({ attempts: 3, backoff: 'fixed', delay: '250ms' }, undefined, undefined))!,
      read(readRuleOptions({ attempts: 7, delay: '1s', factor: 3.25, max_delay: '10m', jitter: 0.1 }, 16, { limit: 100, per: '1h30m' }))!,
      read(readRuleOptions(undefined, undefined, { limit: 3, per: '1s' }))!,
    ];
    for (const options of cases) {
      const json = optionsToJson(options);
      expect(read(readRuleOptions(json['retry'], json['concurrency'], json['rate'])), JSON.stringify(json)).to.deep.equal(options);
      expect(read(readOptionTokens(optionTokens(options))), optionTokens(options).join(' ')).to.deep.equal(options);
    }
    expect(optionsToJson(cases[1])).to.deep.equal({ retry: { attempts: 3, backoff: 'fixed', delay: '250ms', max_delay: '1h', jitter: 0 } });
    expect(optionsToJson(cases[2])).to.deep.equal({
      retry: { attempts: 7, backoff: 'exponential', delay: '1s', factor: 3.25, max_delay: '10m', jitter: 0.1 },
      concurrency: 16, rate: { limit: 100, per: '1h30m' },
    });
    expect(optionTokens(cases[0])).to.deep.equal(['retry.attempts=1', 'retry.backoff=exponential', 'retry.factor=2', 'retry.max_delay=1h']);
  });

  describe('retry.on', () => {
    const ON = [{ kind: '5xx', value: 0 }, { kind: 'http_status', value: 429 }, { kind: 'network', value: 0 }, { kind: 'exit_status', value: 75 }];

    it('an HTTP array and a comma-separated RULE SET value read into the same classes, in the order given', () => {
      const http = read(readRuleOptions({ attempts: 3, delay: '1s', on: ['5xx', '429', 'network', 'exit:75'] }, undefined, undefined));
      expect(http?.retry?.on).to.deep.equal(ON);
      expect(read(readOptionTokens(['retry.on=5xx,429,network,exit:75', 'retry.attempts=3', 'retry.delay=1s']))).to.deep.equal(http);
    });

    it('refuses, naming retry.on: empty, an empty entry, an unknown class, a duplicate, a status out of range, without attempts', () => {
      const tcp = (value: string): string => refused(readOptionTokens(['retry.attempts=3', 'retry.delay=1s', `retry.on=${value}`]));
      expect(tcp('')).to.equal('retry.on: must name at least one failure class');
      expect(tcp('5xx,,429')).to.match(/^retry\.on: entry 2 is not a failure class \(known: /);
      expect(tcp('5xx,')).to.match(/^retry\.on: entry 2 is not a failure class/);
      expect(tcp('server')).to.match(/^retry\.on: server is not a failure class/);
      expect(tcp('429,429')).to.equal('retry.on: 429 is given twice');
      expect(tcp('exit:300')).to.equal('retry.on: exit:300: an exit status is from 1 to 255');
      expect(tcp(Array.from({ length: 33 }, (_, i) => 500 + i).join(','))).to.equal('retry.on: names at most 32 failure classes');
      expect(refused(readOptionTokens(['retry.on=5xx']))).to.equal('retry.attempts: is required with any other retry option');
      expect(refused(readOptionTokens(['retry.attempts=2', 'retry.delay=1s', 'retry.on=5xx', 'retry.on=4xx']))).to.equal('retry.on: given twice');
      expect(refused(readRuleOptions({ attempts: 2, delay: '1s', on: '5xx,429' }, undefined, undefined))).to.match(/^retry\.on: must be a list of failure classes/);
      expect(refused(readRuleOptions({ on: ['5xx'] }, undefined, undefined))).to.match(/^retry\.attempts: /);
    });

    it('is written back only when set, as given: JSON an array, tokens one comma-separated value after the other retry options', () => {
      const options = read(readOptionTokens(['retry.attempts=3', 'retry.backoff=fixed', 'retry.delay=100ms', 'retry.on=404,exit:75,signal', 'concurrency=2']))!;
      expect(optionTokens(options)).to.deep.equal(['retry.attempts=3', 'retry.backoff=fixed', 'retry.delay=100ms', 'retry.max_delay=1h', 'retry.on=404,exit:75,signal', 'concurrency=2']);
      expect(optionsToJson(options)).to.deep.equal({
        retry: { attempts: 3, backoff: 'fixed', delay: '100ms', max_delay: '1h', jitter: 0, on: ['404', 'exit:75', 'signal'] }, concurrency: 2,
      });
      const json = optionsToJson(options);
      expect(read(readRuleOptions(json['retry'], json['concurrency'], json['rate']))).to.deep.equal(options);
      expect(read(readOptionTokens(optionTokens(options)))).to.deep.equal(options);
      const without = read(readRuleOptions({ attempts: 3, delay: '1s' }, undefined, undefined))!;
      expect(optionTokens(without).filter((t) => t.startsWith('retry.on'))).to.deep.equal([]);
      expect(optionsToJson(without)['retry']).to.not.have.property('on');
    });

    it('a rule whose policy has on needs format 5; any other options format 4', () => {
      expect(optionsFormat(read(readOptionTokens(['retry.attempts=2', 'retry.delay=1s', 'retry.on=5xx']))!)).to.equal(RETRY_ON_FORMAT);
      expect(optionsFormat(read(readOptionTokens(['retry.attempts=2', 'retry.delay=1s', 'concurrency=3']))!)).to.equal(RETRIES_FORMAT);
      expect(optionsFormat(read(readOptionTokens(['concurrency=3']))!)).to.equal(RETRIES_FORMAT);
      expect([RETRIES_FORMAT, RETRY_ON_FORMAT]).to.deep.equal([4, 5]);
    });
  });

  describe('on: the node tags a job requires', () => {
    it('an HTTP array and a comma-separated RULE SET value read into the same tags, in the order given; alone, the only option', () => {
      const http = read(readRuleOptions(undefined, undefined, undefined, ['eu', 'db', 'rack:3']));
      expect(http).to.deep.equal({ on: ['eu', 'db', 'rack:3'] });
      expect(read(readOptionTokens(['on=eu,db,rack:3']))).to.deep.equal(http);
      const sixteen = Array.from({ length: 16 }, (_, i) => `t${i}`);
      expect(read(readOptionTokens([`on=${sixteen.join(',')}`]))?.on).to.deep.equal(sixteen);
      expect(read(readOptionTokens(['concurrency=2', 'on=db']))).to.deep.equal({ concurrency: 2, on: ['db'] });
    });

    it('refuses, naming on: not a list, empty, an empty entry, a bad tag, a duplicate, too many, given twice', () => {
      const tcp = (value: string): string => refused(readOptionTokens([`on=${value}`]));
      const http = (value: unknown): string => refused(readRuleOptions(undefined, undefined, undefined, value));
      expect(http('db,eu')).to.equal('on: must be a list of tags');
      expect(http({ db: true })).to.equal('on: must be a list of tags');
      expect(http([])).to.equal('on: must name at least one node tag (omit it to run anywhere)');
      expect(tcp('')).to.equal('on: must name at least one node tag (omit it to run anywhere)');
      expect(tcp('db,,eu')).to.match(/^on: a tag is 1 to 64 characters of .*, got ""$/);
      expect(tcp('-db')).to.match(/^on: a tag is 1 to 64 characters .*, got "-db"$/);
      expect(http(['db', 7])).to.match(/^on: a tag is .*, got 7$/);
      expect(http(['x'.repeat(65)])).to.match(/^on: a tag is 1 to 64 characters/);
      expect(tcp('db,eu,db')).to.equal('on: "db" is given twice');
      expect(tcp(Array.from({ length: 17 }, (_, i) => `t${i}`).join(','))).to.equal('on: at most 16 tags');
      expect(refused(readOptionTokens(['on=db', 'on=eu']))).to.equal('on: given twice');
    });

    it('is written back only when set, as given: JSON an array, the token last', () => {
      const options = read(readOptionTokens(['on=eu,db', 'retry.attempts=2', 'retry.delay=1s', 'rate.limit=3', 'rate.per=1s']))!;
      expect(optionTokens(options)).to.deep.equal([
        'retry.attempts=2', 'retry.backoff=exponential', 'retry.delay=1s', 'retry.factor=2', 'retry.max_delay=1h', 'rate.limit=3', 'rate.per=1s', 'on=eu,db',
      ]);
      const json = optionsToJson(options);
      expect(json['on']).to.deep.equal(['eu', 'db']);
      expect(read(readRuleOptions(json['retry'], json['concurrency'], json['rate'], json['on']))).to.deep.equal(options);
      expect(read(readOptionTokens(optionTokens(options)))).to.deep.equal(options);
      const without = read(readOptionTokens(['concurrency=1']))!;
      expect(optionsToJson(without)).to.not.have.property('on');
      expect(optionTokens(without)).to.deep.equal(['concurrency=1']);
    });

    it('a rule with on needs format 6, whatever else it has; without it, what it needed before', () => {
      expect(optionsFormat(read(readOptionTokens(['on=db']))!)).to.equal(PLACEMENT_FORMAT);
      expect(optionsFormat(read(readOptionTokens(['on=db', 'retry.attempts=2', 'retry.delay=1s', 'retry.on=5xx']))!)).to.equal(PLACEMENT_FORMAT);
      expect(optionsFormat(read(readOptionTokens(['retry.attempts=2', 'retry.delay=1s', 'retry.on=5xx']))!)).to.equal(RETRY_ON_FORMAT);
      expect(optionsFormat(read(readOptionTokens(['concurrency=3']))!)).to.equal(RETRIES_FORMAT);
      expect(PLACEMENT_FORMAT).to.equal(6);
    });
  });
});
