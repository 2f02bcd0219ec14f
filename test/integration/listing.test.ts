// Paged listings through the real daemon (lib/domain/page.ts): QUERY and LISTRULES answers
// larger than a page stream out whole and in order; GET /jobs and GET /rules page with limit,
// cursor and Link; and a client that pipelines listings without reading costs the daemon
// one page, not every answer at once.
import { expect } from 'chai';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';
import { treeRss } from '../helpers/procfs.ts';
import { TCP_PAGE_ENTRIES } from '../../lib/domain/page.ts';
import { HttpApi } from './http-client.ts';

const MiB = 1024 * 1024;

/** Sends every line in one write and reads one reply line per line, each `<rid> OK`. */
async function pipelined(client: LineClient, lines: string[]): Promise<void> {
  client.write(lines.join(''));
  for (let i = 0; i < lines.length; i++) {
    const line = await client.readLine(10000);
    if (line === null || !/^\S+ OK$/.test(line)) throw new Error(`unexpected reply ${String(line)}`);
  }
}

async function loadJobs(client: LineClient, count: number, prefix = 'l'): Promise<void> {
  await pipelined(client, Array.from({ length: count }, (_, i) => `s${i} SET ${prefix}.${i} ${4_000_000_000_000_000_000n + BigInt(i)}\n`));
}

describe('paged listings', function () {
  this.timeout(60000);
  let daemon: Daemon | null = null;
  const clients: LineClient[] = [];
  const connect = async (): Promise<LineClient> => {
    const c = await LineClient.connect(daemon!.tcp);
    clients.push(c);
    return c;
  };

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await daemon?.stop();
    daemon = null;
  });

  it('QUERY and LISTRULES larger than a page: every entry once, then OK, and pipelined commands after them in order', async () => {
    daemon = await Daemon.start({ workers: 1 });
    const c = await connect();
    const jobs = 2 * TCP_PAGE_ENTRIES + 100;
    await loadJobs(c, jobs);
    await pipelined(c, Array.from({ length: TCP_PAGE_ENTRIES + 5 }, (_, i) => `r${i} RULE SET rule.${i} l.${i}. shell true\n`));
    c.write('q QUERY l.\nr LISTRULES\ng GET l.7\n');
    const query = await c.collect('q', 10000);
    expect(query.at(-1)).to.equal('q OK');
    const ids = query.slice(0, -1).map((l) => l.split(' ')[1]);
    expect(new Set(ids).size).to.equal(jobs);
    expect(ids).to.have.length(jobs);
    const rules = await c.collect('r', 10000);
    expect(rules).to.have.length(TCP_PAGE_ENTRIES + 6);
    expect(rules.at(-1)).to.equal('r OK');
    expect(await c.readLine()).to.equal(`g OK planned ${4_000_000_000_000_000_007n}`);
  });

  it('1 000 pipelined QUERYs never read: the daemon holds a page, not every answer, and serves others meanwhile', async () => {
    daemon = await Daemon.start({ workers: 1 });
    const loader = await connect();
    const jobs = 2000;
    await loadJobs(loader, jobs);
    const before = treeRss(daemon.proc.pid!);
    const greedy = await connect();
    greedy.socket.pause(); // never reads: the daemon's replies pile up unless it stops producing them
    greedy.write(Array.from({ length: 1000 }, (_, i) => `q${i} QUERY\n`).join(''));
    // Another client's whole QUERY and a STAT go through meanwhile.
    const other = await connect();
    expect(await other.request('o', 'QUERY l.', 10000)).to.have.length(jobs + 1);
    expect((await other.request('s', 'STAT')).at(-1)).to.equal('s OK');
    // Unpaged, the 1 000 answers (2 million entries) were built at once: gigabytes. Paged, the
    // growth is a page and a socket buffer.
    const grown = treeRss(daemon.proc.pid!) - before;
    expect(grown, `RSS grew by ${(grown / MiB).toFixed(1)} MiB`).to.be.below(64 * MiB);
    // Once it reads, the greedy client gets every answer, complete and in order.
    greedy.socket.resume();
    for (let q = 0; q < 1000; q += 1) {
      const lines = await greedy.collect(`q${q}`, 20000);
      if (lines.length !== jobs + 1) throw new Error(`q${q}: ${lines.length} lines`);
    }
  });

  it('GET /jobs and GET /rules: limit, an opaque cursor and a Link header to the next page', async () => {
    daemon = await Daemon.start({ workers: 1, config: { http: { listen: '127.0.0.1:0' } } });
    const c = await connect();
    await loadJobs(c, 2500);
    await loadJobs(c, 3, 'other');
    const api = new HttpApi(daemon.http!);
    try {
      api.useDocument((await api.json('GET', '/openapi.json')).body);
      // No parameters: the default page of 1 000 and a link to the next one.
      const first = await api.json('GET', '/jobs');
      expect(first.body as unknown[]).to.have.length(1000);
      expect(first.res.headers.link).to.match(/^<\/jobs\?limit=1000&cursor=\d+>; rel="next"$/);
      // Following the links with a prefix visits every matching job once.
      const seen: string[] = [];
      let next: string | null = '/jobs?prefix=l.&limit=700';
      let pages = 0;
      while (next !== null) {
        const page = await api.json('GET', next);
        expect(page.status).to.equal(200);
        const items = page.body as Array<{ id: string }>;
        seen.push(...items.map((j) => j.id));
        const link = page.res.headers.link;
        next = typeof link === 'string' ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
        if (next !== null) expect(items).to.have.length(700);
        pages++;
      }
      expect(pages).to.equal(4);
      expect(seen).to.have.length(2500);
      expect(new Set(seen).size).to.equal(2500);
      expect(seen.every((id) => id.startsWith('l.'))).to.equal(true);
      // A small set needs no parameters and carries no Link.
      const small = await api.json('GET', '/jobs?prefix=other.');
      expect(small.body as unknown[]).to.have.length(3);
      expect(small.res.headers.link).to.equal(undefined);
      const rules = await api.json('GET', '/rules?limit=1');
      expect(rules.body).to.deep.equal([]);
      for (const bad of ['limit=0', 'limit=10001', 'limit=x', 'cursor=-1', 'cursor=abc', 'limit=1&limit=2']) {
        const r = await api.json('GET', `/jobs?${bad}`);
        expect(r.status, bad).to.equal(400);
        expect((r.body as { error: string }).error, bad).to.match(/limit|cursor/);
      }
      expect(api.checked).to.be.above(5);
    } finally {
      api.close();
    }
  });
});
