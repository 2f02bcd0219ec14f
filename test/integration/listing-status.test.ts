// GET /jobs?status= through the real daemon (2 workers, a token file): jobs of every status,
// made so by real runners (a shell rule that succeeds, one that fails, one still sleeping)
// and interleaved in the store, are listed by status alone or by a set of them, combined
// with prefix, limit and cursor, page after page: every page but the last is full and the
// Link header repeats the filters. The namespace of the token still narrows the listing; a
// bad status is a 400 naming it; every response matches the served OpenAPI document.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { HttpApi } from './http-client.ts';

const TOKENS = `
[token.admin]
secret = "secret-admin"
namespace = "*"

[token.team-a]
secret = "secret-a"
namespace = "a."

[token.team-b]
secret = "secret-b"
namespace = "b."
`;

const PAST = '2020-01-01T00:00:00Z';
const FUTURE = '2099-01-01T00:00:00Z';
/** Jobs per namespace: how many of each kind. `run` jobs stay triggered (their runner sleeps). */
const KINDS = { ok: 7, bad: 8, wait: 5, run: 2 } as const;
type Kind = keyof typeof KINDS;
const STATUS_OF: Record<Kind, string> = { ok: 'executed', bad: 'failed', wait: 'planned', run: 'triggered' };

/** Every job id of these namespaces and kinds. */
function idsOf(namespaces: readonly string[], kinds: readonly Kind[]): string[] {
  return namespaces.flatMap((ns) => kinds.flatMap((k) => Array.from({ length: KINDS[k] }, (_, i) => `${ns}.${k}.${i}`))).sort();
}

interface Walk {
  readonly ids: string[];
  readonly statuses: Set<string>;
  readonly pages: number[];
  readonly links: string[];
}

describe('GET /jobs?status=: the server-side status filter', function () {
  this.timeout(60_000);
  let daemon: Daemon;
  let admin: HttpApi;
  let teamA: HttpApi;
  let teamB: HttpApi;

  /** Follows the Link headers from `path` to the end. */
  async function walk(api: HttpApi, path: string): Promise<Walk> {
    const out: Walk = { ids: [], statuses: new Set(), pages: [], links: [] };
    let next: string | null = path;
    while (next !== null) {
      const page = await api.json('GET', next);
      expect(page.status, next).to.equal(200);
      const items = page.body as Array<{ id: string; status: string }>;
      out.ids.push(...items.map((j) => j.id));
      for (const j of items) out.statuses.add(j.status);
      out.pages.push(items.length);
      const link = page.res.headers.link;
      next = typeof link === 'string' ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
      if (next !== null) out.links.push(next);
    }
    out.ids.sort();
    return out;
  }

  before(async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'tokens.toml'), TOKENS);
    daemon = await Daemon.start({ dir, workers: 2, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: join(dir, 'tokens.toml') } } });
    admin = new HttpApi(daemon.http!, 'secret-admin');
    teamA = new HttpApi(daemon.http!, 'secret-a');
    teamB = new HttpApi(daemon.http!, 'secret-b');
    const doc = (await admin.json('GET', '/openapi.json')).body;
    for (const api of [admin, teamA, teamB]) api.useDocument(doc);
    const rules: Record<string, unknown> = {
      ok: { type: 'shell', command: 'true' },
      bad: { type: 'shell', command: 'false' },
      // Stays triggered until the daemon stops (a graceful stop kills the runner's process group).
      run: { type: 'direct', executable: '/bin/sleep', args: ['30'] },
    };
    for (const ns of ['a', 'b']) {
      for (const [kind, runner] of Object.entries(rules)) {
        const put = await admin.request('PUT', `/rules/${ns}.${kind}.`, { body: { pattern: `${ns}.${kind}.`, runner } });
        expect(put.status, put.text).to.equal(200);
      }
    }
    // Interleaved, so that every status is spread over the store's slots.
    for (let i = 0; i < 8; i++) {
      for (const ns of ['a', 'b']) {
        for (const kind of Object.keys(KINDS) as Kind[]) {
          if (i >= KINDS[kind]) continue;
          const put = await admin.request('PUT', `/jobs/${ns}.${kind}.${i}`, { body: { execution: kind === 'wait' ? FUTURE : PAST } });
          expect(put.status, put.text).to.equal(200);
        }
      }
    }
    const want = { jobs_executed: 2 * KINDS.ok, jobs_failed: 2 * KINDS.bad, jobs_triggered: 2 * KINDS.run, jobs_planned: 2 * KINDS.wait };
    await waitFor(async () => {
      const stats = (await admin.json('GET', '/stats')).body as Record<string, number>;
      return Object.entries(want).every(([k, v]) => stats[k] === v);
    }, 20_000, `the runners to settle at ${JSON.stringify(want)}`);
  });

  after(async () => {
    for (const api of [admin, teamA, teamB]) api?.close();
    await daemon?.stop();
  });

  it('one status, in pages of 3: every failed job once, only failed ones, full pages, the filter kept in the Link', async () => {
    const failed = await walk(admin, '/jobs?status=failed&limit=3');
    expect(failed.ids).to.deep.equal(idsOf(['a', 'b'], ['bad']));
    expect([...failed.statuses]).to.deep.equal(['failed']);
    expect(failed.pages).to.deep.equal([3, 3, 3, 3, 3, 1]);
    for (const link of failed.links) expect(link).to.match(/^\/jobs\?status=failed&limit=3&cursor=\d+$/);
    for (const kind of ['ok', 'wait', 'run'] as const) {
      const one = await walk(admin, `/jobs?status=${STATUS_OF[kind]}&limit=2`);
      expect(one.ids, kind).to.deep.equal(idsOf(['a', 'b'], [kind]));
      expect([...one.statuses], kind).to.deep.equal([STATUS_OF[kind]]);
    }
  });

  it('a set of statuses with a prefix: the Link names both, statuses in a fixed order whatever order was asked', async () => {
    const done = await walk(admin, '/jobs?prefix=a.&status=failed,executed&limit=4');
    expect(done.ids).to.deep.equal(idsOf(['a'], ['ok', 'bad']));
    expect([...done.statuses].sort()).to.deep.equal(['executed', 'failed']);
    expect(done.pages).to.deep.equal([4, 4, 4, 3]);
    for (const link of done.links) expect(link).to.match(/^\/jobs\?prefix=a\.&status=executed,failed&limit=4&cursor=\d+$/);
    // Repeats are harmless; all four statuses is every job.
    expect((await walk(admin, '/jobs?status=failed,failed')).ids).to.deep.equal(idsOf(['a', 'b'], ['bad']));
    const all = await walk(admin, '/jobs?status=planned,triggered,executed,failed&limit=1000');
    expect(all.ids).to.deep.equal(idsOf(['a', 'b'], ['ok', 'bad', 'wait', 'run']));
    expect(all.pages).to.deep.equal([44]);
  });

  it('the token\'s namespace still narrows the listing', async () => {
    const a = await walk(teamA, '/jobs?status=failed&limit=3');
    expect(a.ids).to.deep.equal(idsOf(['a'], ['bad']));
    expect(a.pages).to.deep.equal([3, 3, 2]);
    const b = await walk(teamB, '/jobs?status=triggered,failed&limit=5');
    expect(b.ids).to.deep.equal(idsOf(['b'], ['bad', 'run']));
    // A prefix outside the namespace lists nothing (as without a status), whatever the status.
    expect(await walk(teamA, '/jobs?prefix=b.&status=failed')).to.deep.include({ ids: [], pages: [0] });
    expect(await walk(teamA, '/jobs?prefix=a.ok.&status=failed')).to.deep.include({ ids: [], pages: [0] });
  });

  it('a bad status is a 400 naming it; GET /rules has no status and ignores one', async () => {
    const allowed = 'planned, triggered, executed, failed';
    const cases: Array<[string, string]> = [
      ['done', `query parameter status: unknown status "done" (allowed: ${allowed}, several separated by commas)`],
      ['FAILED', `query parameter status: unknown status "FAILED" (allowed: ${allowed}, several separated by commas)`],
      ['', `query parameter status: unknown status "" (allowed: ${allowed}, several separated by commas)`],
      ['failed,', `query parameter status: unknown status "" (allowed: ${allowed}, several separated by commas)`],
      ['failed,%20executed', `query parameter status: unknown status " executed" (allowed: ${allowed}, several separated by commas)`],
      [`${'x'.repeat(100)}`, `query parameter status: unknown status "${'x'.repeat(40)}…" (allowed: ${allowed}, several separated by commas)`],
      ['failed&status=executed', 'query parameter status must be given at most once; name several statuses separated by commas'],
    ];
    for (const [query, message] of cases) {
      const r = await admin.json('GET', `/jobs?limit=5&status=${query}`);
      expect(r.status, query).to.equal(400);
      expect(r.body, query).to.deep.equal({ error: message });
    }
    // The other parameters are still checked with it.
    expect((await admin.json('GET', '/jobs?status=failed&limit=0')).status).to.equal(400);
    // Without a token: 401 before any parameter is looked at.
    expect((await admin.request('GET', '/jobs?status=bogus', { token: null })).status).to.equal(401);
    const rules = await admin.json('GET', '/rules?status=bogus&prefix=a.');
    expect(rules.status).to.equal(200);
    expect((rules.body as unknown[]).length).to.equal(3);
    expect(admin.checked).to.be.above(10);
  });
});
