// The /schedules routes on the real daemon (tickd-protocol(7) HTTP INTERFACE; issue 37): PUT
// answering every default and `next`, each refused field named with nothing changed, GET, the
// paged list, DELETE, the preview, pause/resume, run now (a job GET /jobs shows), the history
// of real occurrences, namespaces with an auth_file, and two clients setting one schedule at
// once. Every response, and every accepted request, is checked against the served OpenAPI
// document (../http-client.ts).
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../../helpers/daemon.ts';
import { LineClient, nowNs, waitFor } from '../../helpers/client.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { occurrenceId } from '../../../lib/schedule/occurrence.ts';
import { HttpApi, startHttpDaemon, stopHttpDaemon, type HttpResult } from '../http-client.ts';

type Obj = Record<string, unknown>;

/** JSON.parse keeping integers beyond 2^53 exact (bigints), as a client must read nanoseconds. */
const parse = (text: string): Obj => JSON.parse(text, (_k, v: unknown, ctx?: { source?: string }) =>
  (typeof v === 'number' && !Number.isSafeInteger(v) && ctx?.source !== undefined && /^-?\d+$/.test(ctx.source) ? BigInt(ctx.source) : v)) as Obj;
const error = (res: HttpResult): string => (JSON.parse(res.text) as { error: string }).error;
const DAY = 86_400_000_000_000n;
const HOUR = 3_600_000_000_000n;
/** What the schedule says, without what the daemon adds (next, fired, skipped). */
const spec = (s: Obj): Obj => Object.fromEntries(Object.entries(s).filter(([k]) => !['next', 'fired', 'skipped', 'job'].includes(k)));

describe('HTTP interface: schedules', function () {
  this.timeout(30000);
  let daemon: Daemon;
  let api: HttpApi;
  let tcp: LineClient;

  before(async () => {
    ({ daemon, api, tcp } = await startHttpDaemon());
    api.useDocument(JSON.parse((await api.request('GET', '/openapi.json')).text));
    const rule = await api.request('PUT', '/rules/sched.', { body: { pattern: 'sched.', runner: { type: 'shell', command: 'true' } } });
    expect(rule.status).to.equal(200);
  });
  after(() => stopHttpDaemon({ daemon, api, tcp }));

  const put = (id: string, body: unknown) => api.request('PUT', `/schedules/${id}`, { body });

  it('PUT answers the schedule with every default filled in and its next occurrence; GET answers the same', async () => {
    const before = nowNs();
    const res = await put('sched.nightly', { cron: '0 3 * * *' });
    expect(res.status, res.text).to.equal(200);
    const body = parse(res.text);
    expect(spec(body)).to.deep.equal({
      id: 'sched.nightly', cron: '0 3 * * *', every: null, tz: 'UTC', start: null, end: null, limit: null,
      jitter: '0s', missed: 'once', catchup: '1h', overlap: 'allow', paused: false, keep: 10,
    });
    expect(body['fired']).to.equal(0);
    expect(body['skipped']).to.deep.equal({ missed: 0, overlap: 0 });
    const next = body['next'] as bigint;
    expect(typeof next).to.equal('bigint');
    expect(next > before && next <= before + DAY, String(next)).to.equal(true);
    expect(next % DAY).to.equal(3n * HOUR);
    const got = await api.request('GET', '/schedules/sched.nightly');
    expect([got.status, got.text]).to.deep.equal([200, res.text]);
  });

  it('PUT reads RFC 3339 and integer nanoseconds exactly, and takes back what GET answered', async () => {
    const text = '{"every":"30s","tz":"Europe/Berlin","start":"2099-01-01T00:00:00+01:00","end":4102444800123456789,"limit":5,"jitter":"2s","missed":"all","catchup":"10m","overlap":"queue","paused":true,"keep":0}';
    const res = await put('sched.exact', text);
    expect(res.status, res.text).to.equal(200);
    expect(res.text).to.contain('"start":4070905200000000000,"end":4102444800123456789,"limit":5,"jitter":"2s","missed":"all","catchup":"10m","overlap":"queue","paused":true,"keep":0,"next":null');
    const again = await put('sched.exact', res.text);
    expect([again.status, again.text]).to.deep.equal([200, res.text]);
  });

  it('refuses every bad field with 400 naming it, and changes nothing', async () => {
    const first = await put('sched.keep', { every: '1h', paused: true });
    expect(first.status).to.equal(200);
    const cases: Array<[Obj, string]> = [
      [{}, 'cron'],
      [{ cron: '0 3 * * *', every: '1h' }, 'every'],
      [{ cron: '0 25 * * *' }, 'cron'],
      [{ cron: 7 }, 'cron'],
      [{ every: '0s' }, 'every'],
      [{ every: 'soon' }, 'every'],
      [{ every: '1h', tz: 'Europe/Atlantis' }, 'tz'],
      [{ every: '1h', start: 'yesterday' }, 'start'],
      [{ every: '1h', end: false }, 'end'],
      [{ every: '1h', start: '2030-01-02T00:00:00Z', end: '2030-01-01T00:00:00Z' }, 'end'],
      [{ every: '1h', limit: 0 }, 'limit'],
      [{ every: '1h', limit: '5x' }, 'limit'],
      [{ every: '1h', jitter: '2h' }, 'jitter'],
      [{ every: '1h', missed: 'later' }, 'missed'],
      [{ every: '1h', catchup: '0s' }, 'catchup'],
      [{ every: '1h', overlap: 'never' }, 'overlap'],
      [{ every: '1h', paused: 'maybe' }, 'paused'],
      [{ every: '1h', keep: -1 }, 'keep'],
      [{ every: '1h', interval: '1h' }, 'interval'],
      [{ every: '1h', id: 'sched.other' }, 'id'],
    ];
    for (const [body, field] of cases) {
      for (const id of ['sched.keep', 'sched.never']) {
        const res = await put(id, body);
        expect(res.status, `${id} ${JSON.stringify(body)}: ${res.text}`).to.equal(400);
        expect(error(res), JSON.stringify(body)).to.match(new RegExp(`^${field}: `));
      }
    }
    for (const [body, message] of [['[1]', 'request body must be a JSON object'], ['{"every":', 'request body is not valid JSON']] as const) {
      const res = await put('sched.keep', body);
      expect([res.status, error(res)]).to.deep.equal([400, message]);
    }
    const badId = await put('sched%20x', { every: '1h' });
    expect([badId.status, error(badId)]).to.deep.equal([400, 'schedule identifier contains invalid character space (allowed: letters, digits, . - _ :)']);
    expect((await api.request('GET', '/schedules/sched.keep')).text).to.equal(first.text);
    expect((await api.request('GET', '/schedules/sched.never')).status).to.equal(404);
  });

  it('GET /schedules pages like GET /jobs: prefix, limit, cursor and Link', async () => {
    const ids = Array.from({ length: 7 }, (_, i) => `sched.list.${i}`);
    for (const id of ids) expect((await put(id, { every: '1h', paused: true })).status).to.equal(200);
    expect((await put('sched.listx', { every: '1h', paused: true })).status).to.equal(200);
    const seen: string[] = [];
    let path: string | null = '/schedules?prefix=sched.list.&limit=3';
    let pages = 0;
    while (path !== null) {
      const res: HttpResult = await api.request('GET', path);
      expect(res.status, res.text).to.equal(200);
      const page = (parse(res.text)['schedules'] as Obj[]).map((s) => s['id'] as string);
      const link = res.headers['link'] as string | undefined;
      if (link !== undefined) {
        expect(page).to.have.length(3);
        expect(link).to.match(/^<\/schedules\?prefix=sched\.list\.&limit=3&cursor=\d+>; rel="next"$/);
      }
      seen.push(...page);
      path = link === undefined ? null : /^<([^>]+)>/.exec(link)![1]!;
      pages++;
    }
    expect(pages).to.be.at.least(3);
    expect([...seen].sort()).to.deep.equal(ids);
    const all = parse((await api.request('GET', '/schedules?prefix=sched.')).text)['schedules'] as Obj[];
    expect(all.map((s) => s['id'])).to.include.members([...ids, 'sched.listx', 'sched.keep']);
    expect(parse((await api.request('GET', '/schedules?prefix=nothing.here')).text)).to.deep.equal({ schedules: [] });
    for (const q of ['limit=0', 'limit=10001', 'cursor=x', 'prefix=a%20b']) {
      const res = await api.request('GET', `/schedules?${q}`);
      expect(res.status, q).to.equal(400);
    }
  });

  it('DELETE answers 204, then 404; the other routes answer 404 for an unknown schedule', async () => {
    expect((await put('sched.gone', { every: '1h' })).status).to.equal(200);
    const del = await api.request('DELETE', '/schedules/sched.gone');
    expect([del.status, del.text]).to.deep.equal([204, '']);
    const unknown = 'schedule "sched.gone" does not exist';
    for (const [method, path] of [['DELETE', ''], ['GET', ''], ['GET', '/next'], ['GET', '/occurrences'], ['POST', '/pause'], ['POST', '/resume'], ['POST', '/run']]) {
      const res = await api.request(method!, `/schedules/sched.gone${path}`);
      expect([res.status, error(res)], `${method} ${path}`).to.deep.equal([404, unknown]);
    }
  });

  it('GET next?n= previews the next nominal times (default 5, 1 to 100)', async () => {
    const before = nowNs();
    const res = await api.request('GET', '/schedules/sched.nightly/next?n=3');
    expect(res.status).to.equal(200);
    const next = parse(res.text)['next'] as bigint[];
    expect(next).to.have.length(3);
    expect(next[0]! > before && next[0]! <= before + DAY).to.equal(true);
    expect(next.map((t) => t % DAY)).to.deep.equal([3n * HOUR, 3n * HOUR, 3n * HOUR]);
    expect([next[1]! - next[0]!, next[2]! - next[1]!]).to.deep.equal([DAY, DAY]);
    expect(parse((await api.request('GET', '/schedules/sched.nightly')).text)['next']).to.equal(next[0]);
    expect(parse((await api.request('GET', '/schedules/sched.nightly/next')).text)['next']).to.have.length(5);
    expect(parse((await api.request('GET', '/schedules/sched.nightly/next?n=100')).text)['next']).to.have.length(100);
    for (const n of ['0', '101', 'x', '']) {
      const bad = await api.request('GET', `/schedules/sched.nightly/next?n=${n}`);
      expect([bad.status, error(bad)], n).to.deep.equal([400, 'query parameter n must be an integer from 1 to 100']);
    }
  });

  it('pause and resume answer the schedule with paused set and cleared', async () => {
    const paused = await api.request('POST', '/schedules/sched.nightly/pause');
    expect(paused.status).to.equal(200);
    expect(parse(paused.text)['paused']).to.equal(true);
    expect(parse((await api.request('GET', '/schedules/sched.nightly')).text)['paused']).to.equal(true);
    const resumed = await api.request('POST', '/schedules/sched.nightly/resume');
    expect(resumed.status).to.equal(200);
    expect(spec(parse(resumed.text))).to.deep.equal({ ...spec(parse(paused.text)), paused: false });
  });

  it('run answers the schedule and a manual job that GET /jobs/{id} shows and the history marks manual', async () => {
    const res = await api.request('POST', '/schedules/sched.nightly/run');
    expect(res.status, res.text).to.equal(200);
    const body = parse(res.text);
    expect(body['id']).to.equal('sched.nightly');
    const job = body['job'] as string;
    expect(job).to.match(/^sched\.nightly:manual-\d{8}T\d{6}(\.\d+)?Z$/);
    const got = await api.request('GET', `/jobs/${job}`);
    expect(got.status).to.equal(200);
    expect(parse(got.text)['id']).to.equal(job);
    // The rule runs `true`: the manual occurrence ends executed.
    await waitFor(async () => parse((await api.request('GET', `/jobs/${job}`)).text)['status'] === 'executed', 10000, 'the manual run executed');
    const history = parse((await api.request('GET', '/schedules/sched.nightly/occurrences')).text)['occurrences'] as Obj[];
    expect(history.find((o) => o['job'] === job)).to.deep.include({ outcome: 'executed', manual: true });
    expect(body['fired']).to.equal(0);
  });

  it('GET occurrences lists real occurrences newest first, each an ordinary job (limit 1 to 100)', async () => {
    const res = await put('sched.tick', { every: '1s' });
    expect(res.status).to.equal(200);
    let history: Obj[] = [];
    await waitFor(async () => {
      history = parse((await api.request('GET', '/schedules/sched.tick/occurrences?limit=3')).text)['occurrences'] as Obj[];
      return history.filter((o) => o['outcome'] === 'executed').length >= 2;
    }, 10000, 'two executed occurrences');
    expect((await api.request('DELETE', '/schedules/sched.tick')).status).to.equal(204);
    expect(history.length).to.be.at.most(3);
    const nominals = history.map((o) => o['nominal'] as bigint);
    expect([...nominals].sort((a, b) => (a < b ? 1 : -1))).to.deep.equal(nominals);
    for (const o of history) {
      expect(o['job']).to.equal(occurrenceId('sched.tick', o['nominal'] as bigint));
      expect((o['nominal'] as bigint) % 1_000_000_000n).to.equal(0n);
      if (o['outcome'] === 'executed') {
        const job = parse((await api.request('GET', `/jobs/${o['job'] as string}`)).text);
        expect(job['status']).to.equal('executed');
      }
    }
    for (const q of ['limit=0', 'limit=101', 'limit=1.5']) {
      const bad = await api.request('GET', `/schedules/sched.nightly/occurrences?${q}`);
      expect([bad.status, error(bad)], q).to.deep.equal([400, 'query parameter limit must be an integer from 1 to 100']);
    }
  });

  it('two clients PUTting the same schedule at once end with one schedule equal to one of the bodies', async () => {
    const other = new HttpApi(daemon.http!);
    try {
      const bodies = [
        { every: '7s', tz: 'UTC', missed: 'skip', overlap: 'skip', keep: 3, paused: true },
        { cron: '*/5 * * * *', tz: 'Europe/Berlin', missed: 'all', overlap: 'queue', keep: 9, paused: true },
      ];
      for (let round = 0; round < 20; round++) {
        const id = `sched.race.${round}`;
        const [x, y] = await Promise.all([api.request('PUT', `/schedules/${id}`, { body: bodies[0] }), other.request('PUT', `/schedules/${id}`, { body: bodies[1] })]);
        expect([x.status, y.status]).to.deep.equal([200, 200]);
        const answers = [spec(parse(x.text)), spec(parse(y.text))];
        const final = spec(parse((await api.request('GET', `/schedules/${id}`)).text));
        expect(answers, `round ${round}`).to.deep.include(final);
        const listed = parse((await api.request('GET', `/schedules?prefix=${id}`)).text)['schedules'] as Obj[];
        expect(listed.map((s) => s['id']), `round ${round}`).to.deep.equal([id]);
      }
    } finally {
      other.close();
    }
  });

  it('a method a schedule path does not offer answers 405 with Allow', async () => {
    const cases: Array<[string, string, string]> = [
      ['POST', '/schedules/sched.nightly', 'GET, HEAD, PUT, DELETE'],
      ['GET', '/schedules/sched.nightly/pause', 'POST'],
      ['DELETE', '/schedules/sched.nightly/run', 'POST'],
      ['POST', '/schedules/sched.nightly/next', 'GET, HEAD'],
      ['PUT', '/schedules', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await api.request(method, path, { body: '{}' });
      expect([res.status, res.headers['allow']], `${method} ${path}`).to.deep.equal([405, allow]);
    }
  });

  it('checked every response against the document', () => {
    expect(api.checked).to.be.above(100);
  });
});

const TOKENS = `
[token.a]
secret = "secret-a"
namespace = "a."

[token.admin]
secret = "secret-admin"
namespace = "*"
`;

describe('HTTP interface: schedules and namespaces', function () {
  this.timeout(30000);
  let daemon: Daemon;
  let a: HttpApi;
  let admin: HttpApi;

  before(async () => {
    const dir = tempDir();
    const authFile = join(dir, 'tokens.toml');
    writeFileSync(authFile, TOKENS);
    daemon = await Daemon.start({ dir, workers: 2, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: authFile } } });
    a = new HttpApi(daemon.http!, 'secret-a');
    admin = new HttpApi(daemon.http!, 'secret-admin');
    const doc = JSON.parse((await a.request('GET', '/openapi.json')).text) as unknown;
    for (const api of [a, admin]) api.useDocument(doc);
  });
  after(async () => {
    a?.close();
    admin?.close();
    await daemon?.stop();
  });

  it('a token outside the namespace gets 403 on every route and changes nothing; lists are narrowed', async () => {
    expect((await admin.request('PUT', '/schedules/b.x', { body: { every: '1h', paused: true } })).status).to.equal(200);
    expect((await a.request('PUT', '/schedules/a.x', { body: { every: '1h', paused: true } })).status).to.equal(200);
    const before = (await admin.request('GET', '/schedules/b.x')).text;
    const routes: Array<[string, string, unknown?]> = [
      ['PUT', '/schedules/b.x', { every: '2h' }], ['PUT', '/schedules/b.new', { every: '2h' }], ['GET', '/schedules/b.x'], ['DELETE', '/schedules/b.x'],
      ['GET', '/schedules/b.x/next'], ['GET', '/schedules/b.x/occurrences'],
      ['POST', '/schedules/b.x/pause'], ['POST', '/schedules/b.x/resume'], ['POST', '/schedules/b.x/run'],
    ];
    for (const [method, path, body] of routes) {
      const res = await a.request(method, path, { body });
      expect([res.status, error(res)], `${method} ${path}`).to.deep.equal([403, 'insufficient namespace scope']);
    }
    expect((await admin.request('GET', '/schedules/b.x')).text).to.equal(before);
    expect((await admin.request('GET', '/schedules/b.new')).status).to.equal(404);
    expect(parse((await admin.request('GET', '/jobs?prefix=b.')).text)).to.deep.equal([]);
    const listed = parse((await a.request('GET', '/schedules')).text)['schedules'] as Obj[];
    expect(listed.map((s) => s['id'])).to.deep.equal(['a.x']);
    const all = parse((await admin.request('GET', '/schedules')).text)['schedules'] as Obj[];
    expect(all.map((s) => s['id']).sort()).to.deep.equal(['a.x', 'b.x']);
    // Inside its namespace the same token may do everything; without a token, 401.
    expect((await a.request('POST', '/schedules/a.x/run')).status).to.equal(200);
    const anon = await a.request('GET', '/schedules/a.x', { token: null });
    expect([anon.status, anon.headers['www-authenticate']]).to.deep.equal([401, 'Bearer']);
  });
});
