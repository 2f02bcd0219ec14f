// The console's retries and limits (issue 38; lib/http/ui/console/detail.js, rules.js,
// retry-format.js) in a real headless Chromium, against the real daemon with a token file.
// A job that failed and waits for its next attempt shows its attempt, when the next comes
// (retry_at, exact) and its attempt history; a job that failed for good shows every attempt
// and "Run again": refused with the API's message verbatim (in the dialog and the alert
// region), then run. The rules list shows each rule's options; Edit fills the option inputs
// and Save keeps them (changed only where the form was changed); a refused option shows the
// API's message verbatim; a rule without options stays without. Both views fit 1 280 px and a
// 390 px phone without horizontal scrolling. Any browser console error, page error, failed
// request or request leaving the server fails the test. Skipped only when Chromium cannot be
// had, never under CI=true.
import { expect } from 'chai';
import { waitFor } from '../helpers/client.ts';
import { screenshotPath } from '../helpers/browser.ts';
import { consoleSuite } from './console-suite.ts';

const TOKENS = `
[token.admin]
secret = "secret-admin"
namespace = "*"
`;

const FAIL = { type: 'shell', command: 'echo "boom on $TICKD_JOB_ID" >&2; exit 3' };
const ISO_NS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;
// Browser code as text: the project's TypeScript has no DOM library.
const OVERFLOW = `({
  page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  wide: [...document.querySelectorAll('.scroll, table, section, dialog[open]')]
    .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.className),
})`;

type Obj = Record<string, unknown>;

describe('web console: retries and limits in Chromium', function () {
  this.timeout(90_000);
  const suite = consoleSuite(TOKENS, 'secret-admin');

  before(async () => {
    // Jobs under wait. retry an hour after their first failure; under fail. twice, 100 ms apart.
    await putRule('wait', { pattern: 'wait.', runner: FAIL, retry: { attempts: 2, backoff: 'fixed', delay: '1h' } });
    await putRule('fail', { pattern: 'fail.', runner: FAIL, retry: { attempts: 2, backoff: 'fixed', delay: '100ms' } });
  });

  async function putRule(id: string, body: Obj): Promise<void> {
    const res = await suite.admin.request('PUT', `/rules/${id}`, { body });
    expect(res.status, res.text).to.equal(200);
  }

  async function getJson(path: string): Promise<Obj> {
    const { status, body } = await suite.admin.json('GET', path);
    expect(status).to.equal(200);
    return body as Obj;
  }

  const attemptsOf = async (id: string) => (await getJson(`/jobs/${id}/attempts`))['attempts'] as Obj[];

  /** Plans job `id` now and waits until the daemon has it as `until` says. */
  async function runJob(id: string, until: (job: Obj, attempts: Obj[]) => boolean): Promise<void> {
    expect((await suite.admin.request('PUT', `/jobs/${id}`, { body: { execution: new Date().toISOString() } })).status).to.equal(200);
    await waitFor(async () => until(await getJson(`/jobs/${id}`), await attemptsOf(id)), 20_000, `job ${id}`);
  }

  async function openJob(id: string) {
    const { page } = suite;
    await page.locator('#open-id').fill(id);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `Job ${id}` });
    await dialog.locator('[data-detail="attempt-number"]').waitFor();
    return dialog;
  }

  it('a job waiting for its next attempt: its attempt, when the next comes, its history; no Run again', async () => {
    await runJob('wait.a', (job) => job['retry_at'] !== undefined);
    // The exact nanoseconds: from the text, JSON.parse would round them.
    const retryAt = /"retry_at":(\d+)/.exec((await suite.admin.request('GET', '/jobs/wait.a')).text)![1]!;
    const [attempt] = await attemptsOf('wait.a');
    const page = await suite.openPage();
    const dialog = await openJob('wait.a');
    expect(await dialog.locator('[data-detail="attempt-number"]').innerText()).to.equal('1');
    expect(await dialog.locator('.badge').innerText()).to.equal('triggered');
    const next = dialog.locator('[data-detail="retry-at"]');
    expect(await next.locator('code.ns').innerText()).to.equal(retryAt);
    expect(await next.locator('time').innerText()).to.match(ISO_NS);
    expect(await next.locator('time').getAttribute('datetime')).to.equal(await next.locator('time').innerText());
    expect(await next.locator('.rel').innerText()).to.match(/^in (59 min|1 h)$/);
    const rows = dialog.locator('[data-detail="attempts"] tbody tr');
    expect(await rows.count()).to.equal(1);
    expect(await rows.first().getAttribute('data-attempt')).to.equal('1');
    expect(await rows.first().getAttribute('data-success')).to.equal('false');
    expect(await rows.first().locator('td').last().innerText()).to.equal(attempt!['summary']);
    expect(attempt!['summary']).to.equal('exit status 3');
    expect(await dialog.getByRole('button', { name: 'Run again' }).isHidden()).to.equal(true);
    // Its time has passed, but it is not late: it ran and waits on purpose.
    expect(await dialog.locator('dd', { has: page.locator('time') }).first().locator('.rel').innerText()).to.match(/^(now|\d+ s ago)$/);
    await page.screenshot({ path: screenshotPath('ui-retry-waiting.png') });
    // In the list too: the retry's time beside the badge.
    await page.keyboard.press('Escape');
    const row = page.locator('tr[data-job="wait.a"]');
    expect(await row.locator('[data-field="retry"]').innerText()).to.match(/^retry in (59 min|1 h)$/);
    expect(await row.locator('td.when .rel').innerText()).to.match(/^(now|\d+ s ago)$/);
  });

  it('a failed job: every attempt, Run again refused verbatim, then run again', async () => {
    await runJob('fail.gone', (job) => job['status'] === 'failed');
    await runJob('fail.a', (job, attempts) => job['status'] === 'failed' && attempts.length === 2);
    const page = await suite.openPage();
    // A job removed while its detail is open: Run again is refused, the API's words shown.
    await page.locator('#auto-refresh').uncheck(); // the dialog keeps what it showed
    let dialog = await openJob('fail.gone');
    const retry = dialog.getByRole('button', { name: 'Run again' });
    await retry.waitFor();
    expect((await suite.admin.request('DELETE', '/jobs/fail.gone')).status).to.equal(204);
    const refused = await suite.admin.json('POST', '/jobs/fail.gone/retry');
    expect(refused.status).to.equal(404);
    const said = `POST /jobs/fail.gone/retry failed (HTTP 404): ${(refused.body as { error: string }).error}`;
    suite.watch.expect(/Failed to load resource.*status of 404/);
    await retry.click();
    await dialog.locator('#detail-errors', { hasText: said }).waitFor();
    expect(await dialog.locator('#detail-errors').innerText()).to.equal(said);
    expect(await page.getByRole('alert').innerText()).to.equal(said);
    await page.keyboard.press('Escape');
    await page.locator('#auto-refresh').check();

    // Both attempts, oldest first, each with its times; the job ended at attempt 2.
    const before = await attemptsOf('fail.a');
    dialog = await openJob('fail.a');
    expect(await dialog.locator('#detail-errors').innerText()).to.equal('');
    expect(await dialog.locator('[data-detail="attempt-number"]').innerText()).to.equal('2');
    expect(await dialog.locator('[data-detail="retry-at"]').count()).to.equal(0);
    const rows = dialog.locator('[data-detail="attempts"] tbody tr');
    expect(await rows.count()).to.equal(2);
    expect([await rows.nth(0).getAttribute('data-attempt'), await rows.nth(1).getAttribute('data-attempt')]).to.deep.equal(['1', '2']);
    const cells = await rows.first().locator('th, td').allInnerTexts();
    expect(cells).to.have.length(6);
    expect(cells[1]).to.match(ISO_NS);
    for (const duration of cells.slice(2, 5)) expect(duration).to.match(/^-?[\d.]+ (ns|µs|ms|s)$|min/);
    expect(cells[5]).to.equal('exit status 3');
    await page.screenshot({ path: screenshotPath('ui-retry-failed.png') });

    // Run again: the job runs at once, both attempts afresh, its history kept beside them.
    await dialog.getByRole('button', { name: 'Run again' }).click();
    await page.locator('#status', { hasText: 'Job fail.a runs again.' }).waitFor();
    // Not failed any more, for now: the button goes, the focus stays in the dialog.
    await dialog.getByRole('button', { name: 'Run again' }).waitFor({ state: 'hidden' });
    expect(await page.evaluate('document.activeElement.id')).to.equal('detail-close');
    await waitFor(async () => (await getJson('/jobs/fail.a'))['status'] === 'failed' && (await attemptsOf('fail.a')).length === before.length + 2, 20_000, 'fail.a to fail again');
    await rows.nth(before.length + 1).waitFor();
    expect(await rows.count()).to.equal(before.length + 2);
    await dialog.locator('.badge', { hasText: 'failed' }).waitFor();
    expect(await dialog.locator('#detail-errors').innerText()).to.equal('');
    expect((await page.getByRole('alert').innerText()).trim()).to.equal('');
  });

  it('the rules list shows options; Edit then Save keeps them; the form changes them; refusals verbatim', async () => {
    const all = { retry: { attempts: 4, backoff: 'exponential', delay: '500ms', factor: 1.5, max_delay: '30s', jitter: 0.1 }, concurrency: 2, rate: { limit: 10, per: '1m' } };
    await putRule('opts', { pattern: 'opts.', runner: FAIL, ...all });
    await putRule('plain', { pattern: 'plain.', runner: FAIL });
    const page = await suite.openPage();
    await page.locator('#rules-section').scrollIntoViewIfNeeded();
    const row = page.locator('tr[data-rule="opts"]');
    await row.waitFor();
    expect(await row.locator('[data-field="retry"] code').innerText()).to.equal('4 attempts · exponential 500ms ×1.5 (max 30s) · jitter 0.1');
    expect(await row.locator('[data-field="concurrency"] code').innerText()).to.equal('2');
    expect(await row.locator('[data-field="rate"] code').innerText()).to.equal('10 per 1m');
    expect(await page.locator('tr[data-rule="plain"] .option').count()).to.equal(0);

    // Edit, change only the pattern, Save: every option as it was.
    await page.getByRole('button', { name: 'Edit rule opts' }).click();
    expect(await page.locator('#rule-opt-attempts').inputValue()).to.equal('4');
    expect(await page.locator('#rule-opt-jitter').inputValue()).to.equal('0.1');
    await page.getByLabel('Pattern (job identifier prefix)').fill('opts.b.');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.locator('#status', { hasText: 'Saved rule opts.' }).waitFor();
    expect(await getJson('/rules/opts')).to.deep.equal({ id: 'opts', pattern: 'opts.b.', runner: FAIL, ...all });

    // Through the form: fixed backoff (the factor goes), no jitter, no concurrency; the rate stays.
    await page.getByLabel('Backoff').selectOption('fixed');
    expect(await page.locator('#rule-opt-factor').isDisabled()).to.equal(true);
    await page.getByLabel('Delay', { exact: true }).fill('2s');
    await page.getByLabel('Jitter (0–1)').fill('');
    await page.getByLabel('Concurrency (runs at once, at most)').fill('');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await row.locator('[data-field="retry"] code', { hasText: '4 attempts · fixed 2s (max 30s)' }).waitFor();
    expect(await row.locator('[data-field="concurrency"]').count()).to.equal(0);
    expect(await getJson('/rules/opts')).to.deep.equal({
      id: 'opts', pattern: 'opts.b.', runner: FAIL, retry: { attempts: 4, backoff: 'fixed', delay: '2s', max_delay: '30s', jitter: 0 }, rate: all.rate,
    });

    // A refused option: the API's message in the alert region, unchanged; the rule unchanged.
    const refused = await suite.admin.json('PUT', '/rules/opts', { body: { pattern: 'opts.b.', runner: FAIL, retry: { attempts: 'many' } } });
    expect(refused.status).to.equal(400);
    const message = (refused.body as { error: string }).error;
    expect(message).to.match(/^retry\.attempts: /);
    suite.watch.expect(/Failed to load resource.*status of 400/);
    await page.getByLabel('Attempts, the first run included').fill('many');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('alert').filter({ hasText: message }).waitFor();
    expect(await page.getByRole('alert').innerText()).to.equal(`PUT /rules/opts failed (HTTP 400): ${message}`);
    expect(((await getJson('/rules/opts'))['retry'] as Obj)['attempts']).to.equal(4);

    // A rule without options, edited after one with: the inputs empty, saved without options.
    await page.getByRole('button', { name: 'Edit rule plain' }).click();
    for (const name of ['attempts', 'backoff', 'delay', 'factor', 'max_delay', 'jitter', 'concurrency', 'rate_limit', 'rate_per']) {
      expect(await page.locator(`#rule-opt-${name}`).inputValue(), name).to.equal('');
    }
    await page.getByLabel('Pattern (job identifier prefix)').fill('plain.b.');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.locator('tr[data-rule="plain"] code', { hasText: 'plain.b.' }).waitFor();
    expect(await getJson('/rules/plain')).to.deep.equal({ id: 'plain', pattern: 'plain.b.', runner: FAIL });
    await page.locator('#rules-section').screenshot({ path: screenshotPath('ui-rule-options.png') });
  });

  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    it(`fits ${width} px without horizontal scrolling: rule options, the form, a failed job's history`, async () => {
      await putRule('layout', { pattern: 'layout.', runner: FAIL, retry: { attempts: 3, delay: '250ms', max_delay: '7d', jitter: 0.25 }, concurrency: 100000, rate: { limit: 1000000, per: '1d' } });
      await runJob('layout.a', (job, attempts) => job['status'] === 'failed' && attempts.length >= 3);
      const page = await suite.openPage(width, height);
      await page.locator('#rules-section').scrollIntoViewIfNeeded();
      await page.locator('tr[data-rule="layout"] [data-field="rate"]').waitFor();
      expect(await page.evaluate(OVERFLOW)).to.deep.equal({ page: 0, wide: [] });
      await page.locator('#rules-section').screenshot({ path: screenshotPath(`ui-rule-options-${width}.png`) });

      const dialog = await openJob('layout.a');
      await dialog.locator('[data-detail="attempts"] tbody tr').nth(2).waitFor();
      const box = (await dialog.boundingBox())!;
      expect(box.x).to.be.at.least(0);
      expect(box.x + box.width).to.be.at.most(width);
      expect(await page.evaluate(OVERFLOW)).to.deep.equal({ page: 0, wide: [] });
      await page.screenshot({ path: screenshotPath(`ui-retry-${width}-detail.png`) });
    });
  }
});
