// The console with many jobs, in a real headless Chromium against the real daemon (memory
// persistence, a token file): 20 000 then 100 000 jobs loaded with pipelined TCP SETs (1 in
// 100 already due and matching no rule, so they fail at once and have an attempt). Asserted:
// only one page of 100 jobs is fetched and shown (never the whole listing), the counts come
// from STAT, the DOM stays small, Next/Previous walk the listing's cursors, the prefix filter
// is the server's, any job opens by identifier with its last attempt. Measured with the page's
// Performance API and logged, not asserted (timings depend on the machine): time from
// navigation to the first frame showing a job row, the longest task, elements, bytes fetched
// per refresh. Skipped (with a message) only when Chromium cannot be had, never under CI=true.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Daemon, type Address } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chromiumOrSkip, installPerfProbe, launchChromium, PageWatch, readPerfProbe, screenshotPath, type PerfReport } from '../helpers/browser.ts';

const TOKENS = `
[token.admin]
secret = "secret-admin"
namespace = "*"
`;
const SECRET = 'secret-admin';
const FUTURE_NS = 4_000_000_000_000_000_000n; // 2096
const PAST_NS = 1_600_000_000_000_000_000n; // 2020

const jobId = (i: number): string => `load.${String(i).padStart(6, '0')}`;

/** SETs jobs [from, to) over one authenticated connection, pipelined; rejects on any ERROR. */
function loadJobs(addr: Address, from: number, to: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(addr.port, addr.host);
    const want = to - from + 1; // the AUTH answer, then one line per SET
    let lines = 0;
    let tail = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      const text = tail + chunk;
      const parts = text.split('\n');
      tail = parts.pop()!;
      for (const line of parts) {
        if (line.includes('ERROR')) { socket.destroy(); reject(new Error(`load refused: ${line}`)); return; }
        lines++;
      }
      if (lines >= want) { socket.destroy(); resolve(); }
    });
    socket.on('connect', () => {
      socket.write(`AUTH ${SECRET}\n`);
      let i = from;
      const pump = (): void => {
        while (i < to) {
          const batch: string[] = [];
          for (const end = Math.min(to, i + 2000); i < end; i++) {
            batch.push(`${i} SET ${jobId(i)} ${i % 100 === 0 ? PAST_NS + BigInt(i) : FUTURE_NS + BigInt(i) * 1_000_000_000n}\n`);
          }
          if (!socket.write(batch.join(''))) { socket.once('drain', pump); return; }
        }
      };
      pump();
    });
  });
}

describe('web console with 20 000 and 100 000 jobs in Chromium', function () {
  this.timeout(5 * 60_000);
  let daemon: Daemon;
  let browser: Browser;
  let origin: string;

  before(async function () {
    this.timeout(10 * 60_000); // a first apt-get install of chromium takes minutes
    const chromiumPath = await chromiumOrSkip(this);
    const dir = tempDir();
    writeFileSync(join(dir, 'tokens.toml'), TOKENS);
    daemon = await Daemon.start({ dir, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: join(dir, 'tokens.toml') } } });
    origin = `http://${daemon.http!.host}:${daemon.http!.port}`;
    browser = await launchChromium(chromiumPath);
  });

  after(async () => {
    await browser?.close();
    await daemon?.stop();
  });

  /** Opens the console signed in (token already in the tab) and measures until a few refreshes passed. */
  async function measure(jobs: number): Promise<{ page: Page; watch: PageWatch; report: PerfReport }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const watch = new PageWatch(page);
    await installPerfProbe(page, '#jobs tr[data-job]', SECRET);
    await page.goto(`${origin}/ui/`);
    await readPerfProbe(page);
    await page.locator('[data-count="total"]', { hasText: String(jobs) }).waitFor();
    await page.waitForTimeout(6_500); // three refreshes (every 2 s)
    const report = await readPerfProbe(page);
    const api = report.requests.filter((r) => !r.path.startsWith('/ui/'));
    const after = api.filter((r) => r.startMs > report.firstRenderMs + 200);
    const refreshes = after.filter((r) => r.path === '/stats').length;
    const bytes = after.reduce((n, r) => n + r.bytes, 0);
    const kinds = [...new Set(after.map((r) => r.path.split('?')[0]))].join(', ');
    const longest = Math.max(0, ...report.longTasks);
    console.log(`      ${jobs} jobs: first job row painted ${report.firstRenderMs.toFixed(0)} ms after navigation; `
      + `longest task ${longest.toFixed(0)} ms (${report.longTasks.length} over 50 ms); ${report.elements} elements; `
      + `${refreshes} refreshes, ${(bytes / Math.max(1, refreshes) / 1024).toFixed(1)} KiB each (${kinds}); `
      + `first load ${(api.filter((r) => r.startMs <= report.firstRenderMs).reduce((n, r) => n + r.bytes, 0) / 1024).toFixed(1)} KiB of API data`);
    // Never the whole listing: every listing request asks for one page.
    for (const r of api.filter((x) => x.path.startsWith('/jobs?'))) expect(r.path, r.path).to.match(/^\/jobs\?limit=100(&|$)/);
    expect(refreshes).to.be.at.least(2);
    return { page, watch, report };
  }

  async function checkFirstPage(page: Page, watch: PageWatch, report: PerfReport, jobs: number): Promise<void> {
    expect(await page.locator('#jobs tr[data-job]').count()).to.equal(100);
    expect(await page.locator('#jobs-position').innerText()).to.equal('Page 1 · rows 1–100');
    expect(await page.locator('[data-count="failed"]').innerText()).to.equal(String(jobs / 100));
    expect(await page.locator('[data-count="planned"]').innerText()).to.equal(String(jobs - jobs / 100));
    expect(report.elements, 'elements in the page').to.be.below(3000);
    expect(watch.unexpected).to.deep.equal([]);
  }

  it('20 000 jobs: one page of 100 rows, counts from STAT, a small page', async () => {
    await loadJobs(daemon.tcp, 0, 20_000);
    const { page, watch, report } = await measure(20_000);
    await checkFirstPage(page, watch, report, 20_000);
    await page.context().close();
  });

  it('100 000 jobs: the same first screen; Next/Previous, the server\'s prefix filter, a job opened by identifier', async () => {
    await loadJobs(daemon.tcp, 20_000, 100_000);
    const { page, watch, report } = await measure(100_000);
    await checkFirstPage(page, watch, report, 100_000);
    await page.screenshot({ path: screenshotPath('ui-scale-100000.png') });

    const firstPage = await page.locator('#jobs tr[data-job]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job')));
    await page.locator('#jobs-next').click();
    await page.locator('#jobs-position', { hasText: 'Page 2 · rows 101–200' }).waitFor();
    const secondPage = await page.locator('#jobs tr[data-job]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job')));
    expect(secondPage).to.have.length(100);
    expect(secondPage.filter((id) => firstPage.includes(id))).to.deep.equal([]);
    await page.locator('#jobs-previous').click();
    await page.locator('#jobs-position', { hasText: 'Page 1 · rows 1–100' }).waitFor();
    expect(await page.locator('#jobs tr[data-job]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job')))).to.deep.equal(firstPage);

    // The prefix goes to the server: ten jobs, one page, the last.
    const filtered = page.waitForRequest((req) => req.url().includes('prefix=load.09999'));
    await page.getByLabel('Identifier prefix').first().fill('load.09999');
    await page.getByRole('button', { name: 'Filter' }).first().click();
    await filtered;
    await page.locator('#jobs-position', { hasText: 'Page 1 · rows 1–10 (last page)' }).waitFor();
    expect(await page.locator('#jobs tr[data-job]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job'))))
      .to.deep.equal(Array.from({ length: 10 }, (_, i) => jobId(99_990 + i)));

    // Any job opens by its identifier, on this page or not; a due one failed with no rule.
    await page.getByRole('textbox', { name: 'Job identifier', exact: true }).fill(jobId(0));
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.locator('[data-detail="summary"]', { hasText: 'no matching rule' }).waitFor();
    expect(await dialog.locator('.badge').innerText()).to.equal('failed');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(watch.unexpected).to.deep.equal([]);
    await page.context().close();
  });
});
