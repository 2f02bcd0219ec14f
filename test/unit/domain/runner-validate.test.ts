// Runner validation for every kind, and the amqp / redis address parsers the runners share.
import { expect } from 'chai';
import { MAX_LIST_ITEMS, MAX_STRING_BYTES } from '../../../lib/domain/limits.ts';
import type { RunnerSpec } from '../../../lib/domain/runner-spec.ts';
import {
  isHttpMethod, isRedisCommand, parseAmqpDsn, parseRedisUrl, validateRunner,
} from '../../../lib/domain/runner-validate.ts';

const ok = (spec: RunnerSpec) => expect(validateRunner(spec), JSON.stringify(spec).slice(0, 200)).to.equal(null);
const bad = (spec: unknown, re: RegExp) => {
  const msg = validateRunner(spec as RunnerSpec);
  expect(msg, JSON.stringify(spec)?.slice(0, 200)).to.be.a('string');
  expect(msg).to.match(re);
};

describe('domain/runner-validate', () => {
  describe('shell', () => {
    it('needs a non-empty command', () => {
      ok({ type: 'shell', command: 'echo hi > /dev/null' });
      bad({ type: 'shell', command: '' }, /^shell command must not be empty$/);
      bad({ type: 'shell' }, /^shell command must be a string$/);
    });

    it('rejects NUL and line breaks, which could not be executed or listed', () => {
      bad({ type: 'shell', command: 'a\nb' }, /shell command must not contain NUL or line-break/);
      bad({ type: 'shell', command: 'a\rb' }, /line-break/);
      bad({ type: 'shell', command: 'a\0b' }, /NUL/);
      ok({ type: 'shell', command: 'tab\tok' });
    });

    it('allows exactly 65535 UTF-8 bytes', () => {
      ok({ type: 'shell', command: 'x'.repeat(MAX_STRING_BYTES) });
      bad({ type: 'shell', command: 'x'.repeat(MAX_STRING_BYTES + 1) }, /^shell command too long \(max 65535 bytes\)$/);
      // 21845 three-byte characters = 65535 bytes; one more two-byte character goes over.
      ok({ type: 'shell', command: '€'.repeat(21845) });
      bad({ type: 'shell', command: `${'€'.repeat(21845)}é` }, /too long/);
    });
  });

  describe('direct', () => {
    it('needs a non-empty executable; args may be empty or hold empty strings', () => {
      ok({ type: 'direct', executable: '/bin/echo', args: [] });
      ok({ type: 'direct', executable: '/bin/echo', args: ['', 'a b', '"q"'] });
      bad({ type: 'direct', executable: '', args: [] }, /^direct executable must not be empty$/);
    });

    it('checks each argument and the count', () => {
      bad({ type: 'direct', executable: 'x', args: ['ok', 'a\0'] }, /^direct argument 2 must not contain/);
      bad({ type: 'direct', executable: 'x', args: ['ok', 3] }, /^direct argument 2 must be a string$/);
      bad({ type: 'direct', executable: 'x', args: 'a b' }, /^direct args must be an array/);
      bad({ type: 'direct', executable: 'x', args: ['y'.repeat(70000)] }, /^direct argument 1 too long/);
      ok({ type: 'direct', executable: 'x', args: new Array<string>(MAX_LIST_ITEMS).fill('a') });
      bad({ type: 'direct', executable: 'x', args: new Array<string>(MAX_LIST_ITEMS + 1).fill('a') },
        /^too many direct args \(max 65535\)$/);
    });
  });

  describe('http', () => {
    it('accepts the four methods with http:// and https:// URLs', () => {
      for (const method of ['GET', 'POST', 'PUT', 'DELETE'] as const) {
        ok({ type: 'http', method, url: 'http://127.0.0.1:9/hook' });
        ok({ type: 'http', method, url: 'https://example.com/a?b=c#d' });
      }
    });

    it('rejects other methods, case-sensitively', () => {
      for (const m of ['get', 'PATCH', 'FETCH', '', 7]) bad({ type: 'http', method: m, url: 'http://x/' }, /^http method must be one of/);
    });

    it('rejects other schemes and unparsable URLs', () => {
      bad({ type: 'http', method: 'GET', url: 'ftp://x/' }, /^http url must start with http:\/\/ or https:\/\//);
      bad({ type: 'http', method: 'GET', url: 'HTTP://x/' }, /must start with/);
      bad({ type: 'http', method: 'GET', url: 'http://' }, /not a valid URL|no host/);
      bad({ type: 'http', method: 'GET', url: 'http://exa mple.com/' }, /not a valid URL/);
      bad({ type: 'http', method: 'GET', url: 'http://[::1/' }, /not a valid URL/);
      bad({ type: 'http', method: 'GET', url: '' }, /must not be empty/);
      bad({ type: 'http', method: 'GET', url: 'http://x/\n' }, /line-break/);
    });
  });

  describe('awf', () => {
    it('accepts a workflow with zero or more key=value inputs (empty values allowed)', () => {
      ok({ type: 'awf', workflow: 'deploy', inputs: [] });
      ok({ type: 'awf', workflow: 'deploy', inputs: ['env=prod', 'v=', 'k=a=b', 'msg=hello world'] });
    });

    it('rejects an empty or option-like workflow and inputs without a key', () => {
      bad({ type: 'awf', workflow: '', inputs: [] }, /^awf workflow must not be empty$/);
      bad({ type: 'awf', workflow: '--input', inputs: [] }, /must not start with "-"/);
      bad({ type: 'awf', workflow: 'w', inputs: ['novalue'] }, /^awf input 1 must be key=value with a non-empty key$/);
      bad({ type: 'awf', workflow: 'w', inputs: ['a=1', '=v'] }, /^awf input 2 must be key=value/);
      bad({ type: 'awf', workflow: 'w' }, /^awf inputs must be an array/);
    });
  });

  describe('amqp', () => {
    it('accepts DSNs with and without credentials, port and vhost; exchange and routing key may be empty', () => {
      ok({ type: 'amqp', dsn: 'amqp://guest:guest@127.0.0.1:5672/', exchange: 'ex', routing_key: 'rk' });
      ok({ type: 'amqp', dsn: 'amqp://broker', exchange: '', routing_key: '' });
      ok({ type: 'amqp', dsn: 'amqp://u@broker:1/vh', exchange: 'ex', routing_key: 'a.b' });
    });

    it('rejects amqps:// with a clear message, other schemes and broken DSNs', () => {
      bad({ type: 'amqp', dsn: 'amqps://h/', exchange: 'e', routing_key: 'r' }, /amqps:\/\/ \(TLS\) is not supported; use amqp:\/\//);
      bad({ type: 'amqp', dsn: 'http://h/', exchange: 'e', routing_key: 'r' }, /^amqp dsn must start with amqp:\/\//);
      bad({ type: 'amqp', dsn: 'amqp://', exchange: 'e', routing_key: 'r' }, /no host|not a valid/);
      bad({ type: 'amqp', dsn: '', exchange: 'e', routing_key: 'r' }, /^amqp dsn must not be empty$/);
      bad({ type: 'amqp', dsn: 'amqp://h:99999/', exchange: 'e', routing_key: 'r' }, /not a valid URL|port/);
    });

    it('limits exchange and routing key to AMQP short strings', () => {
      ok({ type: 'amqp', dsn: 'amqp://h', exchange: 'e'.repeat(255), routing_key: 'r'.repeat(255) });
      bad({ type: 'amqp', dsn: 'amqp://h', exchange: 'e'.repeat(256), routing_key: '' }, /^amqp exchange too long \(max 255 bytes\)$/);
      bad({ type: 'amqp', dsn: 'amqp://h', exchange: '', routing_key: 'r'.repeat(256) }, /^amqp routing_key too long/);
      bad({ type: 'amqp', dsn: 'amqp://h', exchange: 3, routing_key: '' }, /^amqp exchange must be a string$/);
    });
  });

  describe('redis', () => {
    it('accepts the four commands with a non-empty key', () => {
      for (const command of ['PUBLISH', 'RPUSH', 'LPUSH', 'SET'] as const) {
        ok({ type: 'redis', url: 'redis://127.0.0.1:6379/0', command, key: 'q' });
      }
      ok({ type: 'redis', url: 'redis://:secret@h', command: 'SET', key: 'k' });
    });

    it('rejects other commands case-sensitively, an empty key, rediss:// and bad databases', () => {
      for (const command of ['GET', 'set', 'DEL', '']) {
        bad({ type: 'redis', url: 'redis://h', command, key: 'k' }, /^redis command must be one of PUBLISH, RPUSH, LPUSH, SET/);
      }
      bad({ type: 'redis', url: 'redis://h', command: 'SET', key: '' }, /^redis key must not be empty$/);
      bad({ type: 'redis', url: 'rediss://h', command: 'SET', key: 'k' }, /rediss:\/\/ \(TLS\) is not supported/);
      bad({ type: 'redis', url: 'redis://h/x', command: 'SET', key: 'k' }, /database must be a non-negative integer/);
      bad({ type: 'redis', url: 'tcp://h', command: 'SET', key: 'k' }, /^redis url must start with redis:\/\//);
    });
  });

  it('rejects an unknown type and a non-object without throwing', () => {
    bad({ type: 'teleport' }, /^unknown runner type/);
    bad(null, /must be an object/);
    bad('shell', /must be an object/);
  });

  describe('parseAmqpDsn', () => {
    it('returns the parts, with defaults', () => {
      expect(parseAmqpDsn('amqp://broker')).to.deep.equal({ host: 'broker', port: 5672, vhost: '/' });
      expect(parseAmqpDsn('amqp://broker/')).to.deep.equal({ host: 'broker', port: 5672, vhost: '/' });
      expect(parseAmqpDsn('amqp://guest:guest@127.0.0.1:5673/')).to.deep.equal(
        { host: '127.0.0.1', port: 5673, user: 'guest', password: 'guest', vhost: '/' });
      expect(parseAmqpDsn('amqp://u@h/prod')).to.deep.equal({ host: 'h', port: 5672, user: 'u', vhost: 'prod' });
    });

    it('percent-decodes credentials and vhost, and unwraps IPv6 hosts', () => {
      expect(parseAmqpDsn('amqp://us%40er:p%3Ass%2F@[::1]:5672/%2Fteam')).to.deep.equal(
        { host: '::1', port: 5672, user: 'us@er', password: 'p:ss/', vhost: '/team' });
      expect(parseAmqpDsn('amqp://h/%2f')).to.deep.equal({ host: 'h', port: 5672, vhost: '/' });
    });

    it('accepts an upper-case scheme', () => {
      expect(parseAmqpDsn('AMQP://h')).to.deep.equal({ host: 'h', port: 5672, vhost: '/' });
    });

    it('returns errors for unusable DSNs', () => {
      const cases: Array<[string, RegExp]> = [
        ['amqps://h', /TLS\) is not supported/], ['AMQPS://h', /TLS/], ['amqp:/h', /must start with amqp:\/\//],
        ['amqp://h/a/b', /single path segment/], ['amqp://h/?heartbeat=5', /query or fragment/],
        ['amqp://h#x', /query or fragment/], ['amqp://u:%zz@h', /percent-encoding/], ['amqp://h/%zz', /percent-encoding/],
        ['amqp://h:0', /port must be 1 to 65535/], ['amqp://h:70000', /not a valid URL/], ['amqp://:5672', /not a valid URL|no host/],
        ['amqp://h o/', /not a valid URL/], ['', /must start with/],
      ];
      for (const [dsn, re] of cases) {
        const r = parseAmqpDsn(dsn);
        expect(r, dsn).to.be.a('string').and.match(re);
      }
    });
  });

  describe('parseRedisUrl', () => {
    it('returns the parts, with defaults', () => {
      expect(parseRedisUrl('redis://h')).to.deep.equal({ host: 'h', port: 6379 });
      expect(parseRedisUrl('redis://h:7000/')).to.deep.equal({ host: 'h', port: 7000 });
      expect(parseRedisUrl('redis://127.0.0.1:6379/0')).to.deep.equal({ host: '127.0.0.1', port: 6379, db: 0 });
      expect(parseRedisUrl('redis://:pw@h/3')).to.deep.equal({ host: 'h', port: 6379, password: 'pw', db: 3 });
      expect(parseRedisUrl('redis://user:p%40ss@[::1]:6380/15')).to.deep.equal(
        { host: '::1', port: 6380, username: 'user', password: 'p@ss', db: 15 });
      expect(parseRedisUrl('redis://user@h')).to.deep.equal({ host: 'h', port: 6379, username: 'user' });
    });

    it('returns errors for unusable URLs', () => {
      const cases: Array<[string, RegExp]> = [
        ['rediss://h', /TLS\) is not supported; use redis:\/\//], ['http://h', /must start with redis:\/\//],
        ['redis://h/-1', /database/], ['redis://h/1.5', /database/], ['redis://h/0/1', /database/],
        ['redis://h/99999999999', /database/], ['redis://h/2147483648', /database/], ['redis://h?db=1', /query/],
        ['redis://', /not a valid URL|no host/], ['redis://h:0', /port/],
      ];
      for (const [url, re] of cases) {
        const r = parseRedisUrl(url);
        expect(r, url).to.be.a('string').and.match(re);
      }
      expect(parseRedisUrl('redis://h/2147483647')).to.deep.equal({ host: 'h', port: 6379, db: 2147483647 });
    });
  });

  it('type guards match the spec lists exactly', () => {
    expect(['GET', 'POST', 'PUT', 'DELETE', 'get', 'PATCH'].map(isHttpMethod)).to.deep.equal([true, true, true, true, false, false]);
    expect(['PUBLISH', 'RPUSH', 'LPUSH', 'SET', 'set', 'GET'].map(isRedisCommand)).to.deep.equal([true, true, true, true, false, false]);
  });
});
