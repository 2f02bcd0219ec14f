// The console (/ui/) and the API reference (/docs/) in a real headless Chromium, against the
// real daemon with a token file. The walk: a wrong token is refused and not kept, the right
// one signs in; rules and jobs are made through the forms (exact nanoseconds shown beside
// the relative time); the jobs fire and the page follows (badges, STAT counts, the chart);
// the failed job's detail shows its exit status and stderr tail; an API error appears
// verbatim; a job is deleted. A token of another namespace sees none of it. The layout fits
// 1 280 px and a 390 px phone, light and dark, without horizontal scrolling. Any browser
// console error, page error, failed request or request leaving the server fails the test.
// Screenshots go to test-output/. Skipped only when Chromium cannot be had, never under CI=true.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { Daemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chromiumOrSkip, launchChromium, PageWatch, screenshotPath } from '../helpers/browser.ts';
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
const LONG_ID = `walk.long.${'x'.repeat(120)}`;

describe('web console and API reference in Chromium', function () {
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
    const authFile = join(dir, 'tokens.toml');
    writeFileSync(authFile, TOKENS);
    daemon = await Daemon.start({ dir, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: authFile } } });
    origin = `http://${daemon.http!.host}:${daemon.http!.port}`;
    admin = new HttpApi(daemon.http!, 'secret-admin');
    browser = await launchChromium(chromiumPath);
  });

  after(async () => {
    await browser?.close();
    admin?.close();
    await daemon?.stop();
  });

  /** A fresh browser context (its own sessionStorage) with a watched page. */
  async function newPage(options: BrowserContextOptions = { viewport: { width: 1400, height: 1000 } }): Promise<{ page: Page; watch: PageWatch }> {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const watch = new PageWatch(page);
    open.push({ close: () => context.close(), watch });
    // The console confirms deletions with window.confirm.
    page.on('dialog', (dialog) => void dialog.accept());
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

  const stat = (page: Page, key: string) => page.locator(`[data-stat="${key}"]`);
  const count = (page: Page, status: string) => page.locator(`[data-count="${status}"]`);
  const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const row = (page: Page, id: string) => page.locator(`tr[data-job="${id}"]`);

  /** The header's line for each token of TOKENS (GET /whoami). */
  const SIGNED_IN: Record<string, string> = {
    'secret-admin': 'signed in as admin (namespace *)',
    'secret-other': 'signed in as other (namespace other.)',
  };

  async function signIn(page: Page, secret: string): Promise<void> {
    await page.goto(`${origin}/ui/`);
    await page.locator('#session-state', { hasText: 'needs a token' }).waitFor();
    // Keyboard only: the token field has focus on a fresh page; Enter submits its form.
    await page.keyboard.type(secret);
    await page.keyboard.press('Enter');
    await page.locator('#whoami', { hasText: exactly(SIGNED_IN[secret]!) }).waitFor();
    await page.locator('#refreshed', { hasText: 'Last refreshed' }).waitFor();
  }

  it('a wrong token is reported as wrong and not kept; the right one signs in', async () => {
    const { page, watch } = await newPage();
    await page.goto(`${origin}/ui/`);
    await page.locator('#session-state', { hasText: 'needs a token' }).waitFor();
    watch.expect(/Failed to load resource.*status of 401/);
    await page.keyboard.type('not-a-secret');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Wrong token' }).waitFor();
    expect(await page.getByRole('alert').innerText()).to.equal('Wrong token: the server refused it (HTTP 401 unauthorized). It was not kept.');
    expect(await page.evaluate("sessionStorage.getItem('tickd.token')")).to.equal(null);
    expect(await page.locator('#whoami').innerText()).to.equal('not signed in');
    expect(await page.locator('#status').innerText()).to.not.contain('Signed in');
    // Only the check itself reached a data route; nothing was shown.
    expect(watch.requests.filter((u) => !u.includes('/ui/') && /\/(jobs|rules|activity)\b/.test(u))).to.deep.equal([]);
    expect(await page.locator('#jobs tr').count()).to.equal(0);
    await page.screenshot({ path: screenshotPath('ui-wrong-token.png') });

    // The refused text is selected in the still-focused field: typing replaces it.
    expect(await page.evaluate('document.activeElement.id')).to.equal('token');
    await page.keyboard.type('secret-admin');
    await page.keyboard.press('Enter');
    await page.locator('#whoami', { hasText: exactly('signed in as admin (namespace *)') }).waitFor();
    expect(await page.locator('#whoami').getAttribute('title')).to.equal('This token may see and change every job and rule.');
    await page.locator('#status', { hasText: 'Signed in.' }).waitFor();
    expect((await page.getByRole('alert').innerText()).trim()).to.equal('');
    expect(await page.locator('#session').isHidden()).to.equal(true);
    expect(await page.evaluate("sessionStorage.getItem('tickd.token')")).to.equal('secret-admin');
    await page.locator('#jobs', { hasText: 'No jobs.' }).waitFor();
  });

  it('a kept token the server no longer accepts is dropped with a message, and nothing is shown', async () => {
    const { page, watch } = await newPage();
    await page.addInitScript({ content: "sessionStorage.setItem('tickd.token', 'secret-revoked')" });
    // The first refresh asks /stats, /whoami (the header names the kept token), /activity,
    // one page of jobs, one of rules and one of schedules: six 401s.
    for (let i = 0; i < 6; i++) watch.expect(/Failed to load resource.*status of 401/);
    await page.goto(`${origin}/ui/`);
    await page.getByRole('alert').filter({ hasText: 'no longer accepts the token' }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('tickd.token')")).to.equal(null);
    await page.locator('#session-state', { hasText: 'needs a token' }).waitFor();
    expect(await page.locator('#whoami').innerText()).to.equal('not signed in');
    expect(await page.locator('#jobs tr').count()).to.equal(0);
    expect(await page.evaluate('document.activeElement.id')).to.equal('token');
  });

  it('walk: rules and jobs through the forms, they fire, the failed one shows its exit status and stderr; errors verbatim; delete', async () => {
    const { page, watch } = await newPage();
    await signIn(page, 'secret-admin');
    await count(page, 'total').filter({ hasText: exactly('0') }).waitFor();

    // Rules: one that fails with a message on stderr, one that succeeds (shell), one direct.
    const rules: Array<[string, string]> = [['walk.fail.', 'echo "disk full on $TICKD_JOB_ID" >&2; exit 3'], ['walk.ok.', 'echo fine']];
    for (const [id, command] of rules) {
      await page.locator('#rule-id').fill(id);
      await page.getByLabel('Pattern (job identifier prefix)').fill(id);
      await page.getByLabel('Runner', { exact: true }).selectOption('shell');
      await page.getByLabel('Command').fill(command);
      await page.getByRole('button', { name: 'Save rule' }).click();
      await page.locator(`tr[data-rule="${id}"]`).waitFor();
    }
    await page.locator('#rule-id').fill('walk.direct');
    await page.getByLabel('Pattern (job identifier prefix)').fill('walk.direct.');
    await page.getByLabel('Runner', { exact: true }).selectOption('direct');
    await page.getByLabel('Executable').fill('/bin/echo');
    await page.getByLabel('Arguments, one per line').fill('hello world\n--flag');
    await page.getByRole('button', { name: 'Save rule' }).click();
    const direct = page.locator('tr[data-rule="walk.direct"]');
    await direct.waitFor();
    expect(await direct.innerText()).to.contain('/bin/echo').and.contain('"hello world" --flag');
    expect((await admin.json('GET', '/rules/walk.direct')).body).to.deep.equal(
      { id: 'walk.direct', pattern: 'walk.direct.', runner: { type: 'direct', executable: '/bin/echo', args: ['hello world', '--flag'] } });

    // A job far ahead: exact nanoseconds beside the relative time.
    await page.locator('#job-id').fill('walk.later');
    await page.getByLabel('Execution time').fill(EXECUTION_ISO);
    await page.getByRole('button', { name: 'Save job' }).click();
    await row(page, 'walk.later').waitFor();
    expect(await row(page, 'walk.later').locator('.badge').innerText()).to.equal('planned');
    expect(await row(page, 'walk.later').locator('time').innerText()).to.equal(EXECUTION_ISO);
    expect(await row(page, 'walk.later').locator('code.ns').innerText()).to.equal(EXECUTION_NS);
    expect(await row(page, 'walk.later').locator('.rel').innerText()).to.match(/^in \d+ d$/);
    await page.locator('#status', { hasText: 'Saved job walk.later.' }).waitFor();

    // Two jobs due in a few seconds: watch them fire.
    const soon = new Date(Date.now() + 4000).toISOString();
    for (const id of ['walk.ok.1', 'walk.fail.1']) {
      await page.locator('#job-id').fill(id);
      await page.locator('#job-execution').fill(soon);
      await page.getByRole('button', { name: 'Save job' }).click();
      await row(page, id).waitFor();
    }
    expect(await row(page, 'walk.fail.1').locator('.rel').innerText()).to.match(/^(in \d+ s|now)$/);
    await page.locator('#jobs-section').scrollIntoViewIfNeeded();
    await row(page, 'walk.ok.1').locator('.badge', { hasText: 'executed' }).waitFor({ timeout: 20_000 });
    await row(page, 'walk.fail.1').locator('.badge', { hasText: 'failed' }).waitFor({ timeout: 20_000 });
    await row(page, 'walk.fail.1').locator('.rel', { hasText: / ago$|^now$/ }).waitFor();
    await count(page, 'failed').filter({ hasText: exactly('1') }).waitFor();
    await count(page, 'executed').filter({ hasText: exactly('1') }).waitFor();
    await page.locator('#overview-section').scrollIntoViewIfNeeded();
    await page.locator('[data-chart="summary"]', { hasText: /Last minute: 2 fired, 1 executed, 1 failed; runner lateness up to/ }).waitFor();
    expect(await page.locator('path[data-chart="fired"]').getAttribute('d')).to.match(/^M0 100(L\d+ [\d.]+)+$/);
    await page.screenshot({ path: screenshotPath('ui-fired.png') });

    // The failed job's detail: its exit status and the tail of its stderr.
    await page.getByRole('button', { name: 'Details of job walk.fail.1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Job walk.fail.1' });
    await dialog.locator('[data-detail="summary"]', { hasText: 'exit status 3' }).waitFor();
    expect(await dialog.locator('[data-detail="exit status"]').innerText()).to.equal('3');
    expect(await dialog.locator('[data-detail="stderr"]').textContent()).to.equal('disk full on walk.fail.1\n');
    expect(await dialog.locator('.badge').innerText()).to.equal('failed');
    expect(await dialog.innerText()).to.contain('walk.fail.').and.contain('shell').and.contain('Lateness');
    await page.screenshot({ path: screenshotPath('ui-job-detail.png') });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.evaluate('document.activeElement.dataset.id')).to.equal('walk.fail.1');

    // Edit fills the form with the stored time, all nine fraction digits, in UTC.
    await page.getByRole('button', { name: 'Edit job walk.later' }).click();
    expect(await page.locator('#job-execution').inputValue()).to.equal('2099-01-01T00:00:00.123456789Z');
    expect(await page.evaluate('document.activeElement.id')).to.equal('job-execution');

    // An invalid time: the API's own message appears in the alert region, unchanged.
    const refused = await admin.json('PUT', '/jobs/walk.bad', { body: { execution: 'tomorrow' } });
    expect(refused.status).to.equal(400);
    const message = (refused.body as { error: string }).error;
    watch.expect(/Failed to load resource.*status of 400/);
    await page.locator('#job-id').fill('walk.bad');
    await page.locator('#job-execution').fill('tomorrow');
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.getByRole('alert').filter({ hasText: message }).waitFor();
    expect(await page.getByRole('alert').innerText()).to.equal(`PUT /jobs/walk.bad failed (HTTP 400): ${message}`);
    await page.screenshot({ path: screenshotPath('ui-console.png'), fullPage: true });

    await page.getByRole('button', { name: 'Delete job walk.ok.1' }).click();
    await row(page, 'walk.ok.1').waitFor({ state: 'detached' });
    await page.locator('#status', { hasText: 'Deleted job walk.ok.1.' }).waitFor();
    await count(page, 'total').filter({ hasText: exactly('2') }).waitFor();
    // The successful delete cleared the earlier error.
    expect((await page.getByRole('alert').innerText()).trim()).to.equal('');
    expect((await admin.request('GET', '/jobs/walk.ok.1')).status).to.equal(404);
    await page.locator('#stats-details > summary').click();
    await stat(page, 'jobs_total').filter({ hasText: exactly('2') }).waitFor();
    await stat(page, 'rules_total').filter({ hasText: exactly('3') }).waitFor();
  });

  it('a token of another namespace sees none of those jobs and rules, and is refused outside it', async () => {
    const { page, watch } = await newPage();
    await signIn(page, 'secret-other');
    await page.locator('#jobs', { hasText: 'No jobs.' }).waitFor();
    await page.locator('#rules', { hasText: 'No rules.' }).waitFor();
    // STAT is service-wide for every token (tickd-protocol(7) AUTHENTICATION): the walk's
    // jobs are counted, not shown.
    await count(page, 'total').filter({ hasText: exactly('2') }).waitFor();

    await page.locator('#job-id').fill('other.mine');
    await page.locator('#job-execution').fill(EXECUTION_ISO);
    await page.getByRole('button', { name: 'Save job' }).click();
    await row(page, 'other.mine').waitFor();
    expect(await page.locator('tbody#jobs tr').count()).to.equal(1);

    watch.expect(/Failed to load resource.*status of 403/);
    await page.locator('#job-id').fill('walk.intruder');
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.getByRole('alert').filter({ hasText: 'PUT /jobs/walk.intruder failed (HTTP 403): insufficient namespace scope' }).waitFor();
    expect((await admin.request('GET', '/jobs/walk.intruder')).status).to.equal(404);

    // The page refreshes on its own what is on screen: a job made elsewhere appears.
    await page.locator('#jobs-section').scrollIntoViewIfNeeded();
    const other = new HttpApi(daemon.http!, 'secret-other');
    try {
      expect((await other.request('PUT', '/jobs/other.from-api', { body: { execution: EXECUTION_ISO } })).status).to.equal(200);
    } finally {
      other.close();
    }
    await row(page, 'other.from-api').waitFor({ timeout: 8_000 });

    // Signing out clears what this token was allowed to see.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#session-state', { hasText: 'needs a token' }).waitFor();
    expect(await page.locator('#jobs tr').count()).to.equal(0);
    expect(await page.locator('#counts td').count()).to.equal(0);
    expect(await page.evaluate("sessionStorage.getItem('tickd.token')")).to.equal(null);
  });

  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      it(`fits ${width} px (${scheme}) without horizontal scrolling; nothing clipped, the detail dialog included`, async () => {
        if ((await admin.request('GET', `/jobs/${LONG_ID}`)).status === 404) {
          expect((await admin.request('PUT', `/jobs/${LONG_ID}`, { body: { execution: EXECUTION_ISO } })).status).to.equal(200);
        }
        const { page } = await newPage({ viewport: { width, height }, colorScheme: scheme, isMobile: width < 500, hasTouch: width < 500 });
        await signIn(page, 'secret-admin');
        await row(page, LONG_ID).waitFor();
        await row(page, 'walk.fail.1').waitFor();
        // Browser code as text: the project's TypeScript has no DOM library.
        const overflow = await page.evaluate(`({
          page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          wide: [...document.querySelectorAll('.scroll, table, section')]
            .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.className),
        })`);
        expect(overflow).to.deep.equal({ page: 0, wide: [] });
        for (const button of await page.locator('#jobs button[data-action="delete-job"], #rules button[data-action="delete-rule"]').all()) {
          const box = (await button.boundingBox())!;
          expect(box.x, 'left edge').to.be.at.least(0);
          expect(box.x + box.width, await button.getAttribute('aria-label') ?? '').to.be.at.most(width);
        }
        const background = await page.evaluate('getComputedStyle(document.documentElement).backgroundColor');
        expect(background).to.equal(scheme === 'dark' ? 'rgb(11, 15, 23)' : 'rgb(243, 244, 246)');
        await page.screenshot({ path: screenshotPath(`ui-${width}-${scheme}.png`), fullPage: true });

        await page.getByRole('button', { name: 'Details of job walk.fail.1' }).click();
        const dialog = page.getByRole('dialog');
        await dialog.locator('[data-detail="stderr"]').waitFor();
        const box = (await dialog.boundingBox())!;
        expect(box.x).to.be.at.least(0);
        expect(box.x + box.width).to.be.at.most(width);
        expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).to.equal(0);
        await page.screenshot({ path: screenshotPath(`ui-${width}-${scheme}-detail.png`) });
      });
    }
  }

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
