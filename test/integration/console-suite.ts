// A browser suite of the console against a real daemon, as the UI tests set one up: called in a
// describe(), it registers the hooks that start a daemon with an HTTP listener and a token file,
// launch Chromium (the suite is skipped when it cannot be had, never under CI=true), open pages
// already signed in, and after each test close the page and fail on anything it did wrong
// (console or page errors, failed requests, requests leaving the server, provoked errors that
// never showed). Not a test file.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Daemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chromiumOrSkip, launchChromium, PageWatch } from '../helpers/browser.ts';
import { HttpApi } from './http-client.ts';

export interface ConsoleSuite {
  readonly daemon: Daemon;
  readonly origin: string;
  /** The API with the suite's token. */
  readonly admin: HttpApi;
  /** The page of the running test (after openPage). */
  readonly page: Page;
  readonly watch: PageWatch;
  /** A fresh context of `width` x `height` (a phone's below 500 px), signed in, at /ui/ once refreshed. */
  openPage(width?: number, height?: number): Promise<Page>;
}

/** `tokens`: the token file's text; `secret`: the token the pages and `admin` use. */
export function consoleSuite(tokens: string, secret: string): ConsoleSuite {
  let browser: Browser | undefined;
  let opened = false;
  const suite = {
    daemon: undefined as unknown as Daemon,
    origin: '',
    admin: undefined as unknown as HttpApi,
    page: undefined as unknown as Page,
    watch: undefined as unknown as PageWatch,
    async openPage(width = 1400, height = 1000): Promise<Page> {
      const context = await browser!.newContext({ viewport: { width, height }, isMobile: width < 500, hasTouch: width < 500 });
      await context.addInitScript({ content: `sessionStorage.setItem('tickd.token', ${JSON.stringify(secret)})` });
      suite.page = await context.newPage();
      suite.page.setDefaultTimeout(10_000);
      suite.watch = new PageWatch(suite.page);
      suite.page.on('dialog', (dialog) => void dialog.accept()); // window.confirm of Delete
      opened = true;
      await suite.page.goto(`${suite.origin}/ui/`);
      await suite.page.locator('#refreshed', { hasText: 'Last refreshed' }).waitFor();
      return suite.page;
    },
  };

  before(async function () {
    this.timeout(10 * 60_000); // a first apt-get install of chromium takes minutes
    const chromiumPath = await chromiumOrSkip(this);
    const dir = tempDir();
    writeFileSync(join(dir, 'tokens.toml'), tokens);
    suite.daemon = await Daemon.start({ dir, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: join(dir, 'tokens.toml') } } });
    suite.origin = `http://${suite.daemon.http!.host}:${suite.daemon.http!.port}`;
    suite.admin = new HttpApi(suite.daemon.http!, secret);
    browser = await launchChromium(chromiumPath);
  });

  after(async () => {
    await browser?.close();
    suite.admin?.close();
    await suite.daemon?.stop();
  });

  afterEach(async () => {
    if (!opened) return;
    opened = false;
    const { page, watch } = suite;
    await watch.closeWith(() => page.context().close());
    expect(watch.unexpected, 'browser errors').to.deep.equal([]);
    expect(watch.unmet(), 'provoked errors that never showed').to.deep.equal([]);
    expect(watch.foreignRequests(suite.origin), 'requests leaving the server').to.deep.equal([]);
  });

  return suite;
}
