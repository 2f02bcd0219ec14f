// The console's session line and its status filter in a real headless Chromium, against the
// real daemon with a token file: the header names the token and its namespace (GET /whoami)
// after sign-in and after a reload that kept the token; the Status select beside the prefix
// filter lists only jobs of that status, page after page, through the server's filter (never
// more than one page of 100 is fetched), combined with the prefix, and the refresh keeps it.
// The jobs' statuses come from real runners: a shell rule that exits 3, one that succeeds,
// and jobs far in the future. Any browser error or unexpected request fails the test.
// Screenshots go to test-output/. Skipped only when Chromium cannot be had, never under CI=true.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Daemon } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chromiumOrSkip, launchChromium, PageWatch, screenshotPath } from '../helpers/browser.ts';
import { HttpApi } from './http-client.ts';

const TOKENS = `
[token.admin]
secret = "secret-admin"
namespace = "*"

[token.ops]
secret = "secret-ops"
namespace = "mix.e."
`;

const FAILED = 120;
const EXECUTED = 30;
const PLANNED = 60;
const pad = (i: number): string => String(i).padStart(3, '0');

describe('web console: signed-in line and status filter in Chromium', function () {
  this.timeout(90_000);
  let daemon: Daemon;
  let browser: Browser;
  let origin: string;
  let admin: HttpApi;
  const open: Array<{ close: () => Promise<void>; watch: PageWatch }> = [];

  before(async function () {
    this.timeout(10 * 60_000); // a first apt-get install of chromium takes minutes
    const chromiumPath = await chromiumOrSkip(this);
    const dir = tempDir();
    writeFileSync(join(dir, 'tokens.toml'), TOKENS);
    daemon = await Daemon.start({ dir, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: join(dir, 'tokens.toml') } } });
    origin = `http://${daemon.http!.host}:${daemon.http!.port}`;
    admin = new HttpApi(daemon.http!, 'secret-admin');
    for (const [id, command] of [['mix.f.', 'echo broken >&2; exit 3'], ['mix.e.', 'true']]) {
      expect((await admin.request('PUT', `/rules/${id}`, { body: { pattern: id, runner: { type: 'shell', command } } })).status).to.equal(200);
    }
    // Interleaved, so that the failed jobs are spread among the others in the store.
    for (let i = 0; i < FAILED; i++) {
      const jobs: Array<[string, string]> = [[`mix.f.${pad(i)}`, '2020-01-01T00:00:00Z']];
      if (i < EXECUTED) jobs.push([`mix.e.${pad(i)}`, '2020-01-01T00:00:00Z']);
      if (i < PLANNED) jobs.push([`mix.p.${pad(i)}`, '2099-01-01T00:00:00Z']);
      for (const [id, execution] of jobs) expect((await admin.request('PUT', `/jobs/${id}`, { body: { execution } })).status).to.equal(200);
    }
    await waitFor(async () => {
      const stats = (await admin.json('GET', '/stats')).body as Record<string, number>;
      return stats['jobs_failed'] === FAILED && stats['jobs_executed'] === EXECUTED;
    }, 30_000, 'the runners to finish');
    browser = await launchChromium(chromiumPath);
  });

  after(async () => {
    await browser?.close();
    admin?.close();
    await daemon?.stop();
  });

  async function newPage(): Promise<{ page: Page; watch: PageWatch }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const watch = new PageWatch(page);
    open.push({ close: () => context.close(), watch });
    return { page, watch };
  }

  afterEach(async () => {
    const pages = open.splice(0);
    for (const { close, watch } of pages) await watch.closeWith(close);
    for (const { watch } of pages) {
      expect(watch.unexpected, 'browser errors').to.deep.equal([]);
      expect(watch.unmet(), 'provoked errors that never showed').to.deep.equal([]);
      expect(watch.foreignRequests(origin), 'requests leaving the server').to.deep.equal([]);
    }
  });

  const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const shownIds = (page: Page) => page.locator('#jobs tr[data-job]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job')!));
  const badges = (page: Page) => page.locator('#jobs tr[data-job] .badge').allInnerTexts();
  const position = (page: Page, text: string) => page.locator('#jobs-position', { hasText: exactly(text) }).waitFor();
  // The jobs' filter form (the rules have one too).
  const jobsFilter = (page: Page) => page.getByRole('search', { name: 'Jobs' });
  const status = (page: Page) => jobsFilter(page).getByLabel('Status');

  async function signIn(page: Page, secret: string): Promise<void> {
    await page.goto(`${origin}/ui/`);
    await page.locator('#session-state', { hasText: 'needs a token' }).waitFor();
    await page.keyboard.type(secret);
    await page.keyboard.press('Enter');
    await page.locator('#refreshed', { hasText: 'Last refreshed' }).waitFor();
  }

  it('the header names the token and its namespace, after sign-in and after a reload; sign-out forgets it', async () => {
    const { page, watch } = await newPage();
    await signIn(page, 'secret-admin');
    const whoami = page.locator('#whoami');
    await page.locator('#whoami', { hasText: exactly('signed in as admin (namespace *)') }).waitFor();
    expect(await whoami.getAttribute('title')).to.equal('This token may see and change every job and rule.');
    // A reload keeps the token (sessionStorage): a refresh asks GET /whoami for the name again.
    const asked = page.waitForRequest((req) => new URL(req.url()).pathname === '/whoami');
    await watch.navigateWith(() => page.reload());
    await asked;
    await page.locator('#whoami', { hasText: exactly('signed in as admin (namespace *)') }).waitFor();

    const { page: ops } = await newPage();
    await signIn(ops, 'secret-ops');
    await ops.locator('#whoami', { hasText: exactly('signed in as ops (namespace mix.e.)') }).waitFor();
    expect(await ops.locator('#whoami').getAttribute('title')).to.equal('This token may see and change only identifiers starting with "mix.e.".');
    await ops.screenshot({ path: screenshotPath('ui-signed-in-as.png') });
    await ops.getByRole('button', { name: 'Sign out' }).click();
    await ops.locator('#whoami', { hasText: exactly('not signed in') }).waitFor();
    expect(await ops.locator('#whoami').getAttribute('title')).to.equal('');
  });

  it('Status "failed" lists only failed jobs, page after page, through the server; with a prefix; kept by the refresh', async () => {
    const { page } = await newPage();
    await signIn(page, 'secret-admin');
    await page.locator('#jobs-section').scrollIntoViewIfNeeded();
    await position(page, 'Page 1 · rows 1–100');
    expect(new Set(await badges(page))).to.deep.equal(new Set(['failed', 'executed', 'planned']));

    const filtered = page.waitForRequest((req) => /\/jobs\?limit=100&status=failed$/.test(req.url()));
    await status(page).selectOption('failed');
    await filtered;
    await position(page, 'Page 1 · rows 1–100');
    await waitFor(async () => (await badges(page)).every((b) => b === 'failed'), 5_000, 'only failed rows');
    const first = await shownIds(page);
    expect(first).to.have.length(100);
    await page.screenshot({ path: screenshotPath('ui-status-failed.png') });

    // Next follows the server's cursor with the filter; the last page holds the rest.
    const next = page.waitForRequest((req) => /\/jobs\?limit=100&cursor=\d+&status=failed$/.test(req.url()));
    await page.locator('#jobs-next').click();
    await next;
    await position(page, `Page 2 · rows 101–${FAILED} (last page)`);
    const second = await shownIds(page);
    expect(await badges(page)).to.deep.equal(Array(FAILED - 100).fill('failed'));
    expect([...first, ...second].sort()).to.deep.equal(Array.from({ length: FAILED }, (_, i) => `mix.f.${pad(i)}`));
    await page.locator('#jobs-previous').click();
    await position(page, 'Page 1 · rows 1–100');
    expect(await shownIds(page)).to.deep.equal(first);

    // The refresh every 2 s asks for the same filtered page, and it stays on screen.
    await page.waitForRequest((req) => /\/jobs\?limit=100&status=failed$/.test(req.url()), { timeout: 5_000 });
    await page.locator('#refreshed', { hasText: 'Last refreshed' }).waitFor();
    expect(await shownIds(page)).to.deep.equal(first);

    // With a prefix: both filters go to the server.
    await jobsFilter(page).getByLabel('Identifier prefix').fill('mix.e.');
    await jobsFilter(page).getByRole('button', { name: 'Filter' }).click();
    await page.locator('#jobs', { hasText: 'No failed jobs with identifier prefix "mix.e.".' }).waitFor();
    await position(page, 'Page 1 · no rows (last page)');
    await status(page).selectOption('executed');
    await position(page, `Page 1 · rows 1–${EXECUTED} (last page)`);
    expect(await badges(page)).to.deep.equal(Array(EXECUTED).fill('executed'));
    await status(page).selectOption('');
    await jobsFilter(page).getByLabel('Identifier prefix').fill('');
    await jobsFilter(page).getByRole('button', { name: 'Filter' }).click();
    await position(page, 'Page 1 · rows 1–100');
    expect(new Set(await badges(page)).size).to.equal(3);
  });
});
