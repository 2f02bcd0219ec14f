// Real-browser test support: finds Debian's chromium (installing it with apt-get when missing
// and we are root), launches it headless through playwright-core, and watches pages for
// console errors, page errors, failed requests and requests that leave the server under test.
// Not a test file. Tests decide what a missing browser means (skip locally, fail under CI).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
/** Screenshots and other artefacts of browser tests (at the repository root, not committed). */
export const OUTPUT_DIR = fileURLToPath(new URL('../../test-output/', import.meta.url));

const LAUNCH_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
];
const APT_TIMEOUT_MS = 9 * 60_000;

export type ChromiumResult = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly reason: string };

function run(cmd: string, args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: APT_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolve({ code, output: `${stdout}${stderr}`.slice(-2000) });
      });
  });
}

async function installChromium(): Promise<ChromiumResult> {
  if (process.platform !== 'linux' || !existsSync('/usr/bin/apt-get')) return { ok: false, reason: `${CHROMIUM_PATH} is missing and there is no apt-get to install it` };
  if (process.getuid?.() !== 0) return { ok: false, reason: `${CHROMIUM_PATH} is missing and installing it needs root (apt-get install -y chromium)` };
  let install = await run('apt-get', ['install', '-y', 'chromium']);
  if (install.code !== 0) {
    // Usually stale package lists: refresh them once and retry.
    const update = await run('apt-get', ['update']);
    if (update.code !== 0) return { ok: false, reason: `apt-get update failed (exit ${update.code}): ${update.output}` };
    install = await run('apt-get', ['install', '-y', 'chromium']);
  }
  if (install.code !== 0) return { ok: false, reason: `apt-get install -y chromium failed (exit ${install.code}): ${install.output}` };
  return existsSync(CHROMIUM_PATH) ? { ok: true, path: CHROMIUM_PATH } : { ok: false, reason: `apt-get installed chromium but ${CHROMIUM_PATH} is missing` };
}

let pending: Promise<ChromiumResult> | null = null;

/** The chromium executable, installed on first need; the same answer for the whole run. */
export function ensureChromium(): Promise<ChromiumResult> {
  pending ??= existsSync(CHROMIUM_PATH) ? Promise.resolve({ ok: true, path: CHROMIUM_PATH }) : installChromium();
  return pending;
}

/**
 * The chromium executable, for a browser suite's `before` hook: under CI=true a missing
 * Chromium fails the suite; elsewhere the suite is skipped with a line that says why.
 */
export async function chromiumOrSkip(ctx: Mocha.Context): Promise<string> {
  const chromium = await ensureChromium();
  if (chromium.ok) return chromium.path;
  if (process.env['CI'] === 'true') throw new Error(`CI=true but Chromium is unavailable: ${chromium.reason}`);
  console.warn(`    skipping browser tests: ${chromium.reason}`);
  return ctx.skip();
}

export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: LAUNCH_ARGS, timeout: 30_000 });
}

export function screenshotPath(name: string): string {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  return `${OUTPUT_DIR}${name}`;
}

/**
 * Everything a page does wrong: console errors, uncaught page errors and failed requests.
 * A test that provokes an error on purpose (an API 4xx, which Chromium logs as "Failed to
 * load resource") declares it with expect(); anything else is unexpected.
 */
export class PageWatch {
  readonly unexpected: string[] = [];
  readonly requests: string[] = [];
  private readonly expected: Array<{ pattern: RegExp; seen: boolean }> = [];
  private closing = false;
  private readonly inFlight = new Set<Request>();
  /** In flight when the test navigated the page itself: aborting them was the test's doing. */
  private readonly cutShort = new Set<Request>();

  constructor(page: Page) {
    page.on('console', (msg) => {
      if (msg.type() === 'error') this.problem(`console error: ${msg.text()} (at ${msg.location().url})`);
    });
    page.on('pageerror', (err) => this.problem(`page error: ${err.stack ?? err.message}`));
    page.on('request', (req) => {
      this.requests.push(req.url());
      this.inFlight.add(req);
    });
    page.on('requestfinished', (req) => this.inFlight.delete(req));
    page.on('requestfailed', (req) => {
      this.inFlight.delete(req);
      const why = req.failure()?.errorText ?? 'unknown';
      if (why === 'net::ERR_ABORTED' && (this.closing || this.cutShort.has(req))) return;
      this.problem(`request failed: ${req.method()} ${req.url()} (${why})`);
    });
  }

  /**
   * Runs `close` (of the page or its context): a request it cuts short on the way (a periodic
   * refresh in flight, seen in a full run) is the test's doing, not the page's.
   */
  async closeWith(close: () => Promise<void>): Promise<void> {
    this.closing = true;
    await close();
  }

  /**
   * Runs a navigation of the test's own (a reload): the requests in flight as it starts (a
   * periodic refresh, seen in a full run on a slow machine) are cut short by the test.
   */
  async navigateWith(navigate: () => Promise<unknown>): Promise<void> {
    for (const req of this.inFlight) this.cutShort.add(req);
    await navigate();
  }

  /** The next problem matching `pattern` is intended (one per call). */
  expect(pattern: RegExp): void {
    this.expected.push({ pattern, seen: false });
  }

  private problem(text: string): void {
    const slot = this.expected.find((e) => !e.seen && e.pattern.test(text));
    if (slot !== undefined) slot.seen = true;
    else this.unexpected.push(text);
  }

  /** Declared problems that never happened (each expect() must have been used). */
  unmet(): string[] {
    return this.expected.filter((e) => !e.seen).map((e) => String(e.pattern));
  }

  /** Requests to anything but `origin` (data: and blob: URLs are local, hence fine). */
  foreignRequests(origin: string): string[] {
    return this.requests.filter((url) => !url.startsWith(`${origin}/`) && !/^(data|blob|about):/.test(url));
  }
}

/** What installPerfProbe saw of a page load, from the page's own Performance API. */
export interface PerfReport {
  /** ms from navigation start to the first frame after the first `selector` match appeared. */
  readonly firstRenderMs: number;
  /** Durations (ms) of every long task (>= 50 ms, PerformanceObserver 'longtask'). */
  readonly longTasks: readonly number[];
  /** Elements in the document now. */
  readonly elements: number;
  /** Every fetch since navigation: path, start (ms since navigation), bytes transferred. */
  readonly requests: ReadonlyArray<{ readonly path: string; readonly startMs: number; readonly bytes: number }>;
}

/**
 * Before the page's own scripts run: records long tasks, and the time of the first frame
 * painted after an element matching `selector` appeared (a MutationObserver notes the
 * insertion; requestAnimationFrame then a task marks the frame that shows it). With
 * `sessionToken`, the console's token is in the tab's sessionStorage from the start.
 * (Browser code is text here: the project's TypeScript has no DOM library.)
 */
export async function installPerfProbe(page: Page, selector: string, sessionToken?: string): Promise<void> {
  await page.addInitScript({
    content: `(() => {
      const token = ${JSON.stringify(sessionToken ?? null)};
      if (token !== null) sessionStorage.setItem('tickd.token', token);
      const probe = { first: -1, tasks: [] };
      window.__perfProbe = probe;
      performance.setResourceTimingBufferSize(100000);
      new PerformanceObserver((list) => { for (const e of list.getEntries()) probe.tasks.push(e.duration); })
        .observe({ type: 'longtask', buffered: true });
      const seen = new MutationObserver(() => {
        if (document.querySelector(${JSON.stringify(selector)}) === null) return;
        seen.disconnect();
        requestAnimationFrame(() => setTimeout(() => { probe.first = performance.now(); }, 0));
      });
      seen.observe(document, { childList: true, subtree: true });
    })();`,
  });
}

/** Waits for the probed first render, then reads the report. */
export async function readPerfProbe(page: Page, timeoutMs = 120_000): Promise<PerfReport> {
  // A function, not text: a text predicate is compiled in the page, which the console's CSP forbids.
  await page.waitForFunction(() => (globalThis as unknown as { __perfProbe: { first: number } }).__perfProbe.first >= 0, undefined, { timeout: timeoutMs });
  return page.evaluate(`({
    firstRenderMs: window.__perfProbe.first,
    longTasks: [...window.__perfProbe.tasks],
    elements: document.getElementsByTagName('*').length,
    requests: performance.getEntriesByType('resource').map((e) => {
      const url = new URL(e.name);
      return { path: url.pathname + url.search, startMs: e.startTime, bytes: e.transferSize };
    }),
  })`) as Promise<PerfReport>;
}
