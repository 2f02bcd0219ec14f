// The console's schedules view (lib/http/ui/console/schedules.js, schedule-detail.js) in a real
// headless Chromium, against the real daemon with a token file. The walk: a rule made through
// the API matches the schedule's occurrence jobs; a schedule `every 1s` is made through the
// form and listed with its next run (relative, ISO, exact nanoseconds); a refused field shows
// the API's message verbatim; the detail shows the next 5 occurrences and, once one fired, an
// executed occurrence with its job; pause and resume (the API agrees each time); run now names
// its job; Edit keeps what the form does not show (paused), as it is at Save; delete. Any browser console error,
// page error, failed request or request leaving the server fails the test. Screenshots go to
// test-output/. Skipped only when Chromium cannot be had, never under CI=true.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Daemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chromiumOrSkip, launchChromium, PageWatch, screenshotPath } from '../helpers/browser.ts';
import { HttpApi } from './http-client.ts';

const TOKENS = `
[token.admin]
secret = "secret-admin"
namespace = "*"
`;

const ID = 'walk.every';
const ISO_NS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;

describe('web console: schedules view in Chromium', function () {
  this.timeout(90_000);
  let daemon: Daemon;
  let browser: Browser;
  let origin: string;
  let admin: HttpApi;
  let page: Page;
  let watch: PageWatch;
  /** Whether this test opened a page (afterEach closes it and checks what it saw). */
  let opened = false;

  before(async function () {
    this.timeout(10 * 60_000); // a first apt-get install of chromium takes minutes
    const chromiumPath = await chromiumOrSkip(this);
    const dir = tempDir();
    writeFileSync(join(dir, 'tokens.toml'), TOKENS);
    daemon = await Daemon.start({ dir, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: join(dir, 'tokens.toml') } } });
    origin = `http://${daemon.http!.host}:${daemon.http!.port}`;
    admin = new HttpApi(daemon.http!, 'secret-admin');
    browser = await launchChromium(chromiumPath);
  });

  after(async () => {
    await browser?.close();
    admin?.close();
    await daemon?.stop();
  });

  async function openPage(width = 1400, height = 1000): Promise<void> {
    const context = await browser.newContext({ viewport: { width, height }, isMobile: width < 500, hasTouch: width < 500 });
    await context.addInitScript({ content: "sessionStorage.setItem('tickd.token', 'secret-admin')" });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    watch = new PageWatch(page);
    page.on('dialog', (dialog) => void dialog.accept()); // window.confirm of Delete
    opened = true;
  }

  afterEach(async () => {
    if (!opened) return;
    opened = false;
    await watch.closeWith(() => page.context().close());
    expect(watch.unexpected, 'browser errors').to.deep.equal([]);
    expect(watch.unmet(), 'provoked errors that never showed').to.deep.equal([]);
    expect(watch.foreignRequests(origin), 'requests leaving the server').to.deep.equal([]);
  });

  const row = (id: string) => page.locator(`tr[data-schedule="${id}"]`);
  const status = (text: string) => page.locator('#status', { hasText: text }).waitFor();
  async function apiSchedule(id: string): Promise<Record<string, unknown>> {
    const { status: code, body } = await admin.json('GET', `/schedules/${id}`);
    expect(code).to.equal(200);
    return body as Record<string, unknown>;
  }

  it('create through the form, list with the next run, detail with next and executed occurrences, pause/resume, run now, edit, delete', async () => {
    expect((await admin.request('PUT', '/rules/sched-walk', { body: { pattern: 'walk.', runner: { type: 'shell', command: 'echo ran' } } })).status).to.equal(200);
    await openPage();
    await page.goto(`${origin}/ui/`);
    await page.locator('#refreshed', { hasText: 'Last refreshed' }).waitFor();
    await page.locator('#schedules-section').scrollIntoViewIfNeeded();
    await page.locator('#schedules', { hasText: 'No schedules.' }).waitFor();

    // A refused field: the API's own message in the alert region, unchanged.
    const refused = await admin.json('PUT', '/schedules/walk.bad', { body: { every: 'soon' } });
    expect(refused.status).to.equal(400);
    const message = (refused.body as { error: string }).error;
    expect(message).to.match(/^every: /);
    watch.expect(/Failed to load resource.*status of 400/);
    await page.locator('#schedule-id').fill('walk.bad');
    await page.getByLabel('Every', { exact: true }).fill('soon');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByRole('alert').filter({ hasText: message }).waitFor();
    expect(await page.getByRole('alert').innerText()).to.equal(`PUT /schedules/walk.bad failed (HTTP 400): ${message}`);

    // The schedule through the form: every 1s, the rest left to the defaults but keep.
    await page.locator('#schedule-id').fill(ID);
    await page.getByLabel('Every', { exact: true }).fill('1s');
    await page.getByLabel('Keep (finished jobs of each outcome)').fill('3');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await status(`Saved schedule ${ID}.`);
    expect((await page.getByRole('alert').innerText()).trim()).to.equal('');
    const saved = await apiSchedule(ID);
    expect(saved).to.include({ id: ID, cron: null, every: '1s', tz: 'UTC', missed: 'once', overlap: 'allow', jitter: '0s', paused: false, keep: 3, limit: null });

    // Listed: spec, the next run as relative time, ISO with nine digits and exact nanoseconds.
    await row(ID).waitFor();
    expect(await row(ID).locator('[data-field="spec"]').innerText()).to.equal('every 1s');
    expect(await row(ID).locator('.badge').innerText()).to.equal('active');
    const next = row(ID).locator('[data-field="next"]');
    expect(await next.locator('.rel').innerText()).to.match(/^(in \d s|now|\d s late)$/);
    expect(await next.locator('time').innerText()).to.match(ISO_NS);
    const ns = await next.locator('code.ns').innerText();
    expect(ns).to.match(/^\d{19}$/);
    // An every-1s occurrence falls on a whole second, to the nanosecond.
    expect(ns.endsWith('000000000')).to.equal(true);
    expect(await row(ID).locator('[data-field="counts"]').innerText()).to.match(/^\d+ fired · skipped: 0 missed, 0 overlap$/);

    // The detail: its fields, the next five occurrences one second apart, then an executed one.
    await page.getByRole('button', { name: `Details of schedule ${ID}` }).click();
    const dialog = page.getByRole('dialog', { name: `Schedule ${ID}` });
    await dialog.locator('[data-detail="next"] li').first().waitFor();
    expect(await dialog.locator('[data-detail="spec"]').innerText()).to.equal('every 1s');
    const instants = await dialog.locator('[data-detail="next"] li code.ns').allInnerTexts();
    expect(instants).to.have.length(5);
    for (let i = 1; i < 5; i++) expect(BigInt(instants[i]!) - BigInt(instants[i - 1]!)).to.equal(1_000_000_000n);
    const executed = dialog.locator('[data-detail="recent"] tr[data-outcome="executed"]').first();
    await executed.waitFor({ timeout: 15_000 });
    expect(await executed.locator('.badge').innerText()).to.equal('executed');
    const job = await executed.locator('td.details code').innerText();
    expect(job).to.match(new RegExp(`^${ID.replace('.', '\\.')}:\\d{8}T\\d{6}Z$`));
    expect((await admin.json('GET', `/jobs/${job}`)).body).to.include({ id: job, status: 'executed' });
    await page.screenshot({ path: screenshotPath('ui-schedule-detail.png') });

    // Pause, then resume: the badge, the button and the API agree each time.
    await dialog.getByRole('button', { name: 'Pause' }).click();
    await status(`Paused schedule ${ID}.`);
    await dialog.locator('.badge-paused', { hasText: 'paused' }).waitFor();
    expect((await apiSchedule(ID))['paused']).to.equal(true);
    // Nothing is next while paused; the calendar's next times are still shown, said to be so.
    await dialog.locator('dd', { hasText: 'none while paused' }).waitFor();
    expect(await dialog.locator('[data-detail="next"] li').count()).to.equal(5);
    expect(await dialog.innerText()).to.contain('what falls in the pause is missed');
    await dialog.getByRole('button', { name: 'Resume' }).click();
    await status(`Resumed schedule ${ID}.`);
    await dialog.locator('.badge-active', { hasText: 'active' }).waitFor();
    expect((await apiSchedule(ID))['paused']).to.equal(false);

    // Run now: the status names the manual occurrence's job, which exists.
    await dialog.getByRole('button', { name: 'Run now' }).click();
    await status(`Ran schedule ${ID} now: job ${ID}:manual-`);
    const manual = /job (\S+)\.$/.exec(await page.locator('#status').innerText())![1]!;
    expect((await admin.request('GET', `/jobs/${manual}`)).status).to.equal(200);

    // Edit keeps what the form does not show: a paused schedule saved again stays paused.
    expect((await admin.request('POST', `/schedules/${ID}/pause`)).status).to.equal(200);
    await dialog.locator('.badge-paused').waitFor();
    await dialog.getByRole('button', { name: 'Edit' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.locator('#schedule-every').inputValue()).to.equal('1s');
    expect(await page.locator('#schedule-keep').inputValue()).to.equal('3');
    expect(await page.locator('#schedule-kept').innerText()).to.contain('paused true');
    await page.getByLabel('Every', { exact: true }).fill('2s');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await status(`Saved schedule ${ID}.`);
    expect(await apiSchedule(ID)).to.include({ every: '2s', paused: true, keep: 3 });
    await row(ID).locator('.badge', { hasText: 'paused' }).waitFor();
    await row(ID).locator('[data-field="spec"]', { hasText: 'every 2s' }).waitFor();
    expect(await row(ID).locator('[data-field="next"]').innerText()).to.equal('none while paused');
    // What is kept is read again at Save: a resume made since the Edit stays.
    expect((await admin.request('POST', `/schedules/${ID}/resume`)).status).to.equal(200);
    await page.getByLabel('Every', { exact: true }).fill('1s');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await row(ID).locator('[data-field="spec"]', { hasText: 'every 1s' }).waitFor();
    expect(await apiSchedule(ID)).to.include({ every: '1s', paused: false, keep: 3 });
    await row(ID).locator('.badge', { hasText: 'active' }).waitFor();
    await page.locator('#schedules-section').screenshot({ path: screenshotPath('ui-schedules.png') });

    // Delete from the detail.
    await page.getByRole('button', { name: `Details of schedule ${ID}` }).click();
    await dialog.locator('[data-detail="next"]').waitFor();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await status(`Deleted schedule ${ID}.`);
    await row(ID).waitFor({ state: 'detached' });
    await page.locator('#schedules', { hasText: 'No schedules.' }).waitFor();
    expect((await admin.request('GET', `/schedules/${ID}`)).status).to.equal(404);
  });

  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    it(`fits ${width} px without horizontal scrolling: a long schedule row and its detail`, async () => {
      const long = `layout.${'x'.repeat(120)}`;
      const body = { cron: '0 30 2 * * 1-5', tz: 'America/Argentina/ComodRivadavia', jitter: '10m', limit: 1000, start: '2026-01-01T00:00:00Z' };
      expect((await admin.request('PUT', `/schedules/${long}`, { body })).status).to.equal(200);
      await openPage(width, height);
      await page.goto(`${origin}/ui/`);
      await page.locator('#schedules-section').scrollIntoViewIfNeeded();
      await row(long).waitFor();
      // Browser code as text: the project's TypeScript has no DOM library.
      const overflow = `({
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        wide: [...document.querySelectorAll('.scroll, table, section, dialog[open]')]
          .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.className),
      })`;
      expect(await page.evaluate(overflow)).to.deep.equal({ page: 0, wide: [] });
      const del = (await row(long).getByRole('button', { name: `Delete schedule ${long}` }).boundingBox())!;
      expect(del.x + del.width).to.be.at.most(width);
      await page.locator('#schedules-section').screenshot({ path: screenshotPath(`ui-schedules-${width}.png`) });

      await page.getByRole('button', { name: `Details of schedule ${long}` }).click();
      const dialog = page.getByRole('dialog');
      await dialog.locator('[data-detail="next"] li').nth(4).waitFor();
      expect(await dialog.locator('[data-detail="spec"]').innerText()).to.equal('cron 0 30 2 * * 1-5');
      const box = (await dialog.boundingBox())!;
      expect(box.x).to.be.at.least(0);
      expect(box.x + box.width).to.be.at.most(width);
      expect(await page.evaluate(overflow)).to.deep.equal({ page: 0, wide: [] });
      await page.screenshot({ path: screenshotPath(`ui-schedules-${width}-detail.png`) });
      expect((await admin.request('DELETE', `/schedules/${long}`)).status).to.equal(204);
    });
  }
});
