// The console (/ui/) and the API reference (/docs/) in a real headless Chromium, against the
// real daemon with a token file: sign in with the keyboard, create a job and rules through the
// forms, see them listed with exact nanoseconds, see an API error verbatim, delete the job,
// watch the STAT figures follow; a token of another namespace sees none of it. Any browser
// console error, page error, failed request or request leaving the server fails the test.
// Skipped (with a message) only when Chromium cannot be had, and never under CI=true.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Daemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { ensureChromium, launchChromium, PageWatch, screenshotPath } from '../helpers/browser.ts';
import { HttpApi } from './http-client.ts';

const TOKENS = `
[token.admin]
secret = "secret-admin"
namespace = "*"

[token.other]
secret = "secret-other"
namespace = "other."
`;

const EXECUTION_ISO = '2099-01-01T00:00:00.123456789Z';
// 2099-01-01T00:00:00Z is 4070908800 s after the epoch; far above 2^53 in nanoseconds.
const EXECUTION_NS = '4070908800123456789';

describe('web console and API reference in Chromium', function () {
  this.timeout(60_000);
  let daemon: Daemon;
  let browser: Browser;
  let origin: string;
  let admin: HttpApi;
  const open: Array<{ context: BrowserContext; watch: PageWatch }> = [];

  before(async function () {
    this.timeout(10 * 60_000); // a first apt-get install of chromium takes minutes
    const chromium = await ensureChromium();
    if (!chromium.ok) {
      if (process.env['CI'] === 'true') throw new Error(`CI=true but Chromium is unavailable: ${chromium.reason}`);
      console.warn(`    skipping browser tests: ${chromium.reason}`);
      this.skip();
    }
    const dir = tempDir();
    const authFile = join(dir, 'tokens.toml');
    writeFileSync(authFile, TOKENS);
    daemon = await Daemon.start({ dir, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: authFile } } });
    origin = `http://${daemon.http!.host}:${daemon.http!.port}`;
    admin = new HttpApi(daemon.http!, 'secret-admin');
    browser = await launchChromium(chromium.path);
  });

  after(async () => {
    await browser?.close();
    admin?.close();
    await daemon?.stop();
  });

  /** A fresh browser context (its own sessionStorage) with a watched page. */
  async function newPage(): Promise<{ page: Page; watch: PageWatch }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const watch = new PageWatch(page);
    open.push({ context, watch });
    // The console confirms deletions with window.confirm.
    page.on('dialog', (dialog) => void dialog.accept());
    return { page, watch };
  }

  afterEach(async () => {
    const pages = open.splice(0);
    for (const { context } of pages) await context.close();
    for (const { watch } of pages) {
      expect(watch.unexpected, 'browser errors').to.deep.equal([]);
      expect(watch.unmet(), 'provoked errors that never showed').to.deep.equal([]);
      expect(watch.foreignRequests(origin), 'requests leaving the server').to.deep.equal([]);
    }
  });

  const stat = (page: Page, key: string) => page.locator(`[data-stat="${key}"]`);
  const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

  async function signIn(page: Page, secret: string): Promise<void> {
    await page.goto(`${origin}/ui/`);
    await page.locator('#session-state', { hasText: 'needs a token' }).waitFor();
    // Keyboard only: the token field has focus on a fresh page; Enter submits its form.
    await page.keyboard.type(secret);
    await page.keyboard.press('Enter');
    await page.locator('#refreshed', { hasText: 'Last refreshed' }).waitFor();
  }

  it('signs in, creates a job and rules through the forms, shows an API error verbatim, deletes the job; STAT follows', async () => {
    const { page, watch } = await newPage();
    await signIn(page, 'secret-admin');
    await stat(page, 'jobs_total').filter({ hasText: exactly('0') }).waitFor();
    expect(await page.locator('#jobs').innerText()).to.contain('No jobs.');

    await page.locator('#job-id').fill('ui.job-1');
    await page.getByLabel('Execution time').fill(EXECUTION_ISO);
    await page.getByRole('button', { name: 'Save job' }).click();
    const row = page.locator('tr[data-job="ui.job-1"]');
    await row.waitFor();
    expect(await row.locator('.badge').innerText()).to.equal('planned');
    expect(await row.locator('time').innerText()).to.equal(EXECUTION_ISO);
    expect(await row.locator('code.ns').innerText()).to.equal(EXECUTION_NS);
    await stat(page, 'jobs_total').filter({ hasText: exactly('1') }).waitFor();
    expect(await page.locator('[data-count="planned"]').innerText()).to.equal('1');
    await page.locator('#status', { hasText: 'Saved job ui.job-1.' }).waitFor();

    // A second job stays, for the namespace test below.
    await page.locator('#job-id').fill('ui.keep');
    await page.locator('#job-execution').fill('2099-06-01T12:00:00+02:00');
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.locator('tr[data-job="ui.keep"]').waitFor();
    // Edit fills the form with the stored time, all nine fraction digits, in UTC.
    await page.getByRole('button', { name: 'Edit job ui.keep' }).click();
    expect(await page.locator('#job-execution').inputValue()).to.equal('2099-06-01T10:00:00.000000000Z');
    expect(await page.evaluate('document.activeElement.id')).to.equal('job-execution');

    // An http rule, then a direct rule with one argument per line.
    await page.locator('#rule-id').fill('ui.rule-http');
    await page.getByLabel('Pattern (job identifier prefix)').fill('ui.');
    await page.getByLabel('Runner', { exact: true }).selectOption('http');
    await page.getByLabel('Method').selectOption('PUT');
    await page.getByLabel('URL').fill('http://127.0.0.1:9/hook');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.locator('tr[data-rule="ui.rule-http"]').waitFor();
    await page.locator('#rule-id').fill('ui.rule-direct');
    await page.getByLabel('Runner', { exact: true }).selectOption('direct');
    await page.getByLabel('Executable').fill('/bin/echo');
    await page.getByLabel('Arguments, one per line').fill('hello world\n--flag');
    await page.getByRole('button', { name: 'Save rule' }).click();
    const direct = page.locator('tr[data-rule="ui.rule-direct"]');
    await direct.waitFor();
    expect(await direct.innerText()).to.contain('/bin/echo').and.contain('"hello world" --flag');
    await stat(page, 'rules_total').filter({ hasText: exactly('2') }).waitFor();
    const stored = await admin.json('GET', '/rules?prefix=ui.');
    expect(stored.body).to.have.deep.members([
      { id: 'ui.rule-http', pattern: 'ui.', runner: { type: 'http', method: 'PUT', url: 'http://127.0.0.1:9/hook' } },
      { id: 'ui.rule-direct', pattern: 'ui.', runner: { type: 'direct', executable: '/bin/echo', args: ['hello world', '--flag'] } },
    ]);

    // An invalid time: the API's own message appears in the alert region, unchanged.
    const refused = await admin.json('PUT', '/jobs/ui.bad', { body: { execution: 'tomorrow' } });
    expect(refused.status).to.equal(400);
    const message = (refused.body as { error: string }).error;
    watch.expect(/Failed to load resource.*status of 400/);
    await page.locator('#job-id').fill('ui.bad');
    await page.locator('#job-execution').fill('tomorrow');
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.getByRole('alert').filter({ hasText: message }).waitFor();
    expect(await page.getByRole('alert').innerText()).to.equal(`PUT /jobs/ui.bad failed (HTTP 400): ${message}`);

    await page.screenshot({ path: screenshotPath('ui-console.png'), fullPage: true });

    await page.getByRole('button', { name: 'Delete job ui.job-1' }).click();
    await row.waitFor({ state: 'detached' });
    await stat(page, 'jobs_total').filter({ hasText: exactly('1') }).waitFor();
    await page.locator('#status', { hasText: 'Deleted job ui.job-1.' }).waitFor();
    // The successful delete cleared the earlier error.
    expect((await page.getByRole('alert').innerText()).trim()).to.equal('');
    expect((await admin.request('GET', '/jobs/ui.job-1')).status).to.equal(404);
  });

  it('a token of another namespace sees none of those jobs and rules, and is refused outside it', async () => {
    const { page, watch } = await newPage();
    await signIn(page, 'secret-other');
    expect(await page.locator('#jobs').innerText()).to.contain('No jobs.');
    expect(await page.locator('#rules').innerText()).to.contain('No rules.');
    // STAT is service-wide for every token (tickd-protocol(7) AUTHENTICATION): ui.keep is
    // counted, not shown.
    await stat(page, 'jobs_total').filter({ hasText: exactly('1') }).waitFor();

    await page.locator('#job-id').fill('other.mine');
    await page.locator('#job-execution').fill(EXECUTION_ISO);
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.locator('tr[data-job="other.mine"]').waitFor();
    expect(await page.locator('tbody#jobs tr').count()).to.equal(1);

    watch.expect(/Failed to load resource.*status of 403/);
    await page.locator('#job-id').fill('ui.intruder');
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.getByRole('alert').filter({ hasText: 'PUT /jobs/ui.intruder failed (HTTP 403): insufficient namespace scope' }).waitFor();
    expect((await admin.request('GET', '/jobs/ui.intruder')).status).to.equal(404);

    // The page refreshes on its own: a job made elsewhere appears without any interaction.
    const other = new HttpApi(daemon.http!, 'secret-other');
    try {
      expect((await other.request('PUT', '/jobs/other.from-api', { body: { execution: EXECUTION_ISO } })).status).to.equal(200);
    } finally {
      other.close();
    }
    await page.locator('tr[data-job="other.from-api"]').waitFor({ timeout: 12_000 });

    // Forgetting the token clears what this token was allowed to see.
    await page.getByRole('button', { name: 'Forget token' }).click();
    await page.locator('#session-state', { hasText: 'needs a token' }).waitFor();
    expect(await page.locator('#jobs tr').count()).to.equal(0);
    expect(await page.evaluate("sessionStorage.getItem('tickd.token')")).to.equal(null);
  });

  it('/docs/ renders the API reference of /openapi.json from local assets', async () => {
    const { page } = await newPage();
    await page.goto(`${origin}/docs/`);
    await page.locator('.opblock-summary-path').first().waitFor();
    const paths = new Set(await page.locator('.opblock-summary-path').allInnerTexts());
    const documented = Object.keys((JSON.parse((await admin.request('GET', '/openapi.json')).text) as { paths: object }).paths);
    expect(documented).to.include.members(['/jobs', '/jobs/{id}', '/rules', '/rules/{id}', '/stats', '/health', '/openapi.json']);
    for (const path of documented) expect([...paths].map((p) => p.replace(/\u200b/g, ''))).to.include(path);
    await page.screenshot({ path: screenshotPath('ui-docs.png'), fullPage: false });
  });
});
