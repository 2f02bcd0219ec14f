// The API reference at /docs/ in a real headless Chromium: Swagger UI groups the operations
// under the document's tags, in the document's order, and lists every operation of
// /openapi.json except the HEAD twins (lib/http/ui/docs/init.js hides them; the document keeps
// them, since the server answers them). Any browser error, or a request leaving the server,
// fails the test. Skipped (with a message) only when Chromium cannot be had, never under CI=true.
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { Daemon } from '../helpers/daemon.ts';
import { chromiumOrSkip, launchChromium, PageWatch, screenshotPath } from '../helpers/browser.ts';
import { HttpApi } from './http-client.ts';

interface Doc {
  readonly tags: ReadonlyArray<{ readonly name: string }>;
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

const METHODS = ['get', 'head', 'put', 'delete', 'post', 'patch', 'options', 'trace'];

describe('API reference (/docs/) in Chromium: tags, no HEAD twins', function () {
  this.timeout(60_000);
  let daemon: Daemon | undefined;
  let browser: Browser | undefined;
  let origin = '';
  let doc: Doc;

  before(async function () {
    this.timeout(10 * 60_000); // a first apt-get install of chromium takes minutes
    const chromiumPath = await chromiumOrSkip(this);
    daemon = await Daemon.start({ config: { http: { listen: '127.0.0.1:0' } } });
    origin = `http://${daemon.http!.host}:${daemon.http!.port}`;
    const api = new HttpApi(daemon.http!);
    try {
      doc = JSON.parse((await api.request('GET', '/openapi.json')).text) as Doc;
    } finally {
      api.close();
    }
    browser = await launchChromium(chromiumPath);
  });

  after(async () => {
    await browser?.close();
    await daemon?.stop();
  });

  it('shows the tags in order and every operation but HEAD', async () => {
    const context = await browser!.newContext({ viewport: { width: 1400, height: 1000 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      const watch = new PageWatch(page);
      await page.goto(`${origin}/docs/`);
      await page.locator('.opblock-summary-path').first().waitFor();

      const tags = await page.locator('.opblock-tag').evaluateAll((els) => els.map((e) => e.getAttribute('data-tag')));
      expect(tags).to.deep.equal(doc.tags.map((t) => t.name));

      const shown = await page.locator('.opblock').evaluateAll((els) => els.map((e) => {
        const method = e.querySelector('.opblock-summary-method')?.textContent ?? '';
        const path = e.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
        return `${method.toLowerCase()} ${path}`;
      }));
      const documented = Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m] !== undefined).map((m) => `${m} ${path}`));
      expect(documented.filter((op) => op.startsWith('head ')), 'the document keeps HEAD').to.have.length.above(0);
      expect([...shown].sort()).to.deep.equal(documented.filter((op) => !op.startsWith('head ')).sort());

      await page.screenshot({ path: screenshotPath('openapi-docs.png'), fullPage: true });
      expect(watch.unexpected, 'browser errors').to.deep.equal([]);
      expect(watch.foreignRequests(origin), 'requests leaving the server').to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
