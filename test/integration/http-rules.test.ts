// The /rules routes on the real daemon without an auth_file (tickd-protocol(7) HTTP INTERFACE):
// the object and string runner forms, the object form of all six kinds in responses (amqp/redis
// set over TCP), validation messages, lists, and rules shared with TCP. Every response and
// accepted request is checked against the served OpenAPI document (http-client.ts).
import { expect } from 'chai';
import type { Daemon } from '../helpers/daemon.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { startHttpDaemon, stopHttpDaemon, type HttpApi } from './http-client.ts';

describe('HTTP interface: rules', function () {
  this.timeout(30000);
  let daemon: Daemon;
  let api: HttpApi;
  let tcp: LineClient;

  before(async () => {
    ({ daemon, api, tcp } = await startHttpDaemon());
    api.useDocument(JSON.parse((await api.request('GET', '/openapi.json')).text));
  });
  after(() => stopHttpDaemon({ daemon, api, tcp }));

  describe('rules', () => {
    const put = (id: string, body: unknown) => api.request('PUT', `/rules/${id}`, { body });

    it('PUT accepts the object form of shell, direct, http and awf and answers the rule as stored', async () => {
      const runners = [
        { type: 'shell', command: 'echo "hi there"' },
        { type: 'direct', executable: '/bin/echo', args: ['a b', '$HOME'] },
        { type: 'http', method: 'POST', url: 'https://example.invalid/hook' },
        { type: 'awf', workflow: 'deploy', inputs: ['env=prod', 'x=1=2'] },
      ];
      for (const [i, runner] of runners.entries()) {
        const res = await put(`obj.${i}`, { pattern: `obj.${i}.`, runner });
        expect([res.status, JSON.parse(res.text)], runner.type).to.deep.equal([200, { id: `obj.${i}`, pattern: `obj.${i}.`, runner }]);
        expect((await api.request('GET', `/rules/obj.${i}`)).text).to.equal(res.text);
      }
    });

    it('PUT accepts the string form (runner + args) for http, awf, shell and direct, stored in object form', async () => {
      const cases: Array<[unknown, unknown]> = [
        [{ runner: 'http', args: ['GET', 'http://h.invalid/x'] }, { type: 'http', method: 'GET', url: 'http://h.invalid/x' }],
        [{ runner: 'awf', args: ['wf', '--input', 'a=1', '--input', 'b=2'] }, { type: 'awf', workflow: 'wf', inputs: ['a=1', 'b=2'] }],
        [{ runner: 'awf', args: ['wf'] }, { type: 'awf', workflow: 'wf', inputs: [] }],
        [{ runner: 'shell', args: ['exit 0'] }, { type: 'shell', command: 'exit 0' }],
        [{ runner: 'direct', args: ['/bin/true', 'x'] }, { type: 'direct', executable: '/bin/true', args: ['x'] }],
      ];
      for (const [i, [form, runner]] of cases.entries()) {
        const res = await put(`str.${i}`, { pattern: 'str.', ...(form as object) });
        expect([res.status, JSON.parse(res.text)], JSON.stringify(form)).to.deep.equal([200, { id: `str.${i}`, pattern: 'str.', runner }]);
      }
    });

    it('a rule read with GET can be PUT back unchanged', async () => {
      const first = await put('back.a', { pattern: '', runner: { type: 'direct', executable: '/bin/true' } });
      const again = await put('back.a', first.text);
      expect([again.status, again.text]).to.deep.equal([200, first.text]);
    });

    it('amqp and redis cannot be set over HTTP (400), in either form', async () => {
      const bodies = [
        { pattern: 'q.', runner: { type: 'amqp', dsn: 'amqp://h', exchange: 'e', routing_key: 'k' } },
        { pattern: 'q.', runner: { type: 'redis', url: 'redis://h', command: 'SET', key: 'k' } },
        { pattern: 'q.', runner: 'redis', args: ['redis://h', 'SET', 'k'] },
        { pattern: 'q.', runner: 'amqp', args: ['amqp://h', 'e', 'k'] },
      ];
      for (const body of bodies) {
        const res = await put('tcponly.a', body);
        expect(res.status).to.equal(400);
        expect((JSON.parse(res.text) as { error: string }).error).to.match(/(amqp|redis).*TCP/);
      }
      expect((await api.request('GET', '/rules/tcponly.a')).status).to.equal(404);
    });

    it('400s name the field', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ runner: { type: 'shell', command: 'x' } }, /^pattern is required$/],
        [{ pattern: 'a b', runner: { type: 'shell', command: 'x' } }, /^pattern /],
        [{ pattern: 'a' }, /^runner is required$/],
        [{ pattern: 'a', runner: { type: 'shell' } }, /^runner\.command is required$/],
        [{ pattern: 'a', runner: { type: 'http', method: 'PATCH', url: 'http://x' } }, /^runner\.method /],
        [{ pattern: 'a', runner: { type: 'http', method: 'GET', url: 'ftp://x' } }, /^runner: http url must start with/],
        [{ pattern: 'a', runner: 'http', args: ['GET'] }, /^args must be \[method, url\]/],
        [{ pattern: 'a', runner: 'awf', args: ['wf', 'k=v'] }, /^args\[1\] must be "--input"$/],
        [{ pattern: 'a', runner: 'shell' }, /^args is required/],
        [{ pattern: 'a', runner: { type: 'shell', command: 'x' }, args: ['y'] }, /^args is only allowed/],
        [{ id: 'other', pattern: 'a', runner: { type: 'shell', command: 'x' } }, /^id in the body/],
      ];
      for (const [body, re] of cases) {
        const res = await put('bad.r', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect((JSON.parse(res.text) as { error: string }).error, JSON.stringify(body)).to.match(re);
      }
      expect((await api.request('GET', '/rules/bad%2Fr')).status).to.equal(400);
    });

    it('GET /rules lists by rule-id prefix; DELETE -> 204 then 404', async () => {
      for (const id of ['lr.a', 'lr.b', 'lrx.c']) await put(id, { pattern: id, runner: { type: 'shell', command: 'true' } });
      const some = JSON.parse((await api.request('GET', '/rules?prefix=lr.')).text) as Array<{ id: string }>;
      expect(some.map((r) => r.id).sort()).to.deep.equal(['lr.a', 'lr.b']);
      const all = JSON.parse((await api.request('GET', '/rules')).text) as Array<{ id: string }>;
      expect(all.map((r) => r.id)).to.include.members(['lr.a', 'lr.b', 'lrx.c']);
      expect((await api.request('DELETE', '/rules/lr.a')).status).to.equal(204);
      const gone = await api.request('DELETE', '/rules/lr.a');
      expect([gone.status, gone.text]).to.deep.equal([404, '{"error":"rule \\"lr.a\\" does not exist"}']);
      expect((await api.request('GET', '/rules/lr.a')).status).to.equal(404);
    });

    it('a rule set over HTTP runs a job set over HTTP', async () => {
      await put('fire.rule', { pattern: 'fire.', runner: 'shell', args: ['exit 0'] });
      await api.request('PUT', '/jobs/fire.a', { body: { execution: '2000-01-01T00:00:00Z' } });
      await waitFor(async () => JSON.parse((await api.request('GET', '/jobs/fire.a')).text).status === 'executed', 10000, 'fire.a executed');
    });
  });

  describe('same store as TCP', () => {
    it('every runner kind set over TCP is read over HTTP in object form', async () => {
      const cmds: Array<[string, unknown]> = [
        ['RULE SET k.shell k.shell shell "echo hi"', { type: 'shell', command: 'echo hi' }],
        ['RULE SET k.direct k.direct direct /bin/echo a b', { type: 'direct', executable: '/bin/echo', args: ['a', 'b'] }],
        ['RULE SET k.http k.http http PUT http://h.invalid/', { type: 'http', method: 'PUT', url: 'http://h.invalid/' }],
        ['RULE SET k.awf k.awf awf wf --input a=1', { type: 'awf', workflow: 'wf', inputs: ['a=1'] }],
        ['RULE SET k.amqp k.amqp amqp amqp://u:p@h.invalid:5672/v ex rk', { type: 'amqp', dsn: 'amqp://u:p@h.invalid:5672/v', exchange: 'ex', routing_key: 'rk' }],
        ['RULE SET k.redis k.redis redis redis://h.invalid:6379/0 LPUSH key', { type: 'redis', url: 'redis://h.invalid:6379/0', command: 'LPUSH', key: 'key' }],
      ];
      for (const [i, [cmd, runner]] of cmds.entries()) {
        expect(await tcp.request(`r${i}`, cmd), cmd).to.deep.equal([`r${i} OK`]);
        const id = cmd.split(' ')[2]!;
        expect(JSON.parse((await api.request('GET', `/rules/${id}`)).text), cmd).to.deep.equal({ id, pattern: id, runner });
      }
    });

    it('a rule PUT over HTTP shows in LISTRULES', async () => {
      await api.request('PUT', '/rules/seen.tcp', { body: { pattern: 'seen.', runner: { type: 'direct', executable: '/bin/echo', args: ['x y'] } } });
      const lines = await tcp.request('l', 'LISTRULES');
      expect(lines).to.include('l seen.tcp seen. direct /bin/echo "x y"');
    });
  });


  describe('retries and limits', () => {
    const put = (id: string, body: unknown) => api.request('PUT', `/rules/${id}`, { body });
    const runner = { type: 'shell', command: 'exit 1' };

    it('PUT stores retry, concurrency and rate, answers them with every retry field, and takes its answer back', async () => {
      const res = await put('opt.a', { pattern: 'opt.', runner, retry: { attempts: 4, delay: '500ms', jitter: 0.1 }, concurrency: 2, rate: { limit: 10, per: '60s' } });
      expect([res.status, JSON.parse(res.text)]).to.deep.equal([200, {
        id: 'opt.a', pattern: 'opt.', runner,
        retry: { attempts: 4, backoff: 'exponential', delay: '500ms', factor: 2, max_delay: '1h', jitter: 0.1 }, concurrency: 2, rate: { limit: 10, per: '1m' },
      }]);
      expect((await api.request('GET', '/rules/opt.a')).text).to.equal(res.text);
      const again = await put('opt.a', res.text);
      expect([again.status, again.text]).to.deep.equal([200, res.text]);
      // Stored again without them, the rule has none.
      const plain = await put('opt.a', { pattern: 'opt.', runner });
      expect(JSON.parse(plain.text)).to.deep.equal({ id: 'opt.a', pattern: 'opt.', runner });
    });

    it('400 names the member at fault, and nothing is stored', async () => {
      const cases: Array<[unknown, string | RegExp]> = [
        [{ retry: { attempts: 3 } }, 'retry.delay: is required when attempts is more than 1'],
        [{ retry: { attempts: 2, delay: '1s', tries: 1 } }, /^retry\.tries: unknown field/],
        [{ retry: [] }, 'retry: must be an object'],
        [{ concurrency: 0 }, 'concurrency: must be an integer from 1 to 100000'],
        [{ rate: { limit: 5 } }, 'rate.per: is required with rate.limit'],
        [{ rate: { limit: 5, per: '1s', burst: 2 } }, 'rate.burst: unknown field (known: limit, per)'],
      ];
      for (const [extra, want] of cases) {
        const res = await put('opt.bad', { pattern: 'opt.', runner, ...(extra as object) });
        expect(res.status, JSON.stringify(extra)).to.equal(400);
        const message = (JSON.parse(res.text) as { error: string }).error;
        if (typeof want === 'string') expect(message, JSON.stringify(extra)).to.equal(want);
        else expect(message, JSON.stringify(extra)).to.match(want);
      }
      expect((await api.request('GET', '/rules/opt.bad')).status).to.equal(404);
    });

    it('options set over TCP read over HTTP, and ones PUT over HTTP show in LISTRULES, pasting back as RULE SET', async () => {
      expect(await tcp.request('o1', 'RULE SET opt.tcp opt.tcp. retry.attempts=3 retry.backoff=fixed retry.delay=2s concurrency=1 shell "exit 1"')).to.deep.equal(['o1 OK']);
      expect(JSON.parse((await api.request('GET', '/rules/opt.tcp')).text)).to.deep.equal({
        id: 'opt.tcp', pattern: 'opt.tcp.', runner, retry: { attempts: 3, backoff: 'fixed', delay: '2s', max_delay: '1h', jitter: 0 }, concurrency: 1,
      });
      const stored = await put('opt.http', { pattern: 'opt.http.', runner, retry: { attempts: 2, delay: '1s' }, rate: { limit: 3, per: '1s' } });
      const line = (await tcp.request('l', 'LISTRULES')).find((l) => l.startsWith('l opt.http '));
      expect(line).to.equal('l opt.http opt.http. retry.attempts=2 retry.backoff=exponential retry.delay=1s retry.factor=2 retry.max_delay=1h rate.limit=3 rate.per=1s shell "exit 1"');
      await api.request('DELETE', '/rules/opt.http');
      expect(await tcp.request('o2', `RULE SET ${line!.slice(2)}`)).to.deep.equal(['o2 OK']);
      expect((await api.request('GET', '/rules/opt.http')).text).to.equal(stored.text);
      expect(await tcp.request('o3', 'RULE SET opt.x opt. concurrency=0 shell x')).to.deep.equal(['o3 ERROR invalid_args concurrency: must be an integer from 1 to 100000']);
    });
  });

  describe('OpenAPI conformity', () => {
    it('checked every response above against the document', () => {
      // At least the 49 fixed requests and one poll of fire.a (the polls vary with timing).
      expect(api.checked).to.be.at.least(50);
    });
  });
});
