// The console in cluster mode (issue 40; lib/http/ui/console/render.js renderCluster,
// detail.js, cluster-format.js) in a real headless Chromium, against a real 1-node cluster (a
// nats-server and a tickd node tagged db,eu, started here) and, for comparison, a tickd
// running alone. The nodes table shows the node, its role, tags and executions as GET /cluster
// says; on the leader, how many executions wait for a node. A job whose rule needs a tag no
// node has waits for a node: its detail says which tags and since when (exact), and the
// leader's count says one waits. A node running alone shows no nodes table and never asks
// /cluster. Both views fit a 390 px phone without horizontal scrolling. Any browser console
// error, page error, failed request or request leaving the server fails the test. Skipped
// when Chromium or nats-server cannot be had, never under CI=true.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { waitFor } from '../helpers/client.ts';
import { startNode, waitForLeader } from '../helpers/cluster-nodes.ts';
import { Daemon } from '../helpers/daemon.ts';
import { chromiumOrSkip, launchChromium, PageWatch, screenshotPath } from '../helpers/browser.ts';
import { closeNatsClients, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { HttpApi } from './http-client.ts';

const ISO_NS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;
// Browser code as text: the project's TypeScript has no DOM library.
const OVERFLOW = 'document.documentElement.scrollWidth - document.documentElement.clientWidth';

type Obj = Record<string, unknown>;

describe('web console: cluster nodes and placement in Chromium', function () {
  this.timeout(120_000);
  let nats: NatsCluster | null = null;
  let node: Daemon | undefined;
  let browser: Browser | undefined;
  let api: HttpApi;
  let origin = '';
  const open: Array<{ page: Page; watch: PageWatch; origin: string }> = [];
  /** What a test started beside the cluster, stopped after its pages are checked. */
  const started: Daemon[] = [];

  before(async function () {
    this.timeout(10 * 60_000); // a first apt-get install of chromium takes minutes
    const bin = requireNatsServer(this);
    const chromiumPath = await chromiumOrSkip(this);
    nats = await startNats(bin, 1);
    // A long placement_wait: the job below waits for a node for the whole test, never no_node.
    node = await startNode(nats, { cluster: 'ui', name: 'n1', extra: ['--node-tags', 'db,eu'], config: { cluster: { placement_wait: 600 } } });
    await waitForLeader([node]);
    origin = `http://${node.http!.host}:${node.http!.port}`;
    api = new HttpApi(node.http!);
    await waitFor(async () => {
      const view = (await api.json('GET', '/cluster')).body as Obj;
      return view['placement'] !== undefined && (view['nodes'] as Obj[]).some((n) => n['executor'] !== undefined);
    }, 20_000, 'the leader to place executions and the node to say what it runs');
    browser = await launchChromium(chromiumPath);
  });

  after(async () => {
    await browser?.close();
    api?.close();
    await node?.kill();
    await closeNatsClients();
    await nats?.stop();
  });

  /** A fresh context at `url` once refreshed; no token: these daemons have no auth_file. */
  async function openPage(url: string, width = 1400, height = 1000): Promise<Page> {
    const context = await browser!.newContext({ viewport: { width, height }, isMobile: width < 500, hasTouch: width < 500 });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    open.push({ page, watch: new PageWatch(page), origin: new URL(url).origin });
    await page.goto(url);
    await page.locator('#refreshed', { hasText: 'Last refreshed' }).waitFor();
    return page;
  }

  afterEach(async () => {
    for (const { page, watch, origin: from } of open.splice(0)) {
      await watch.closeWith(() => page.context().close());
      expect(watch.unexpected, 'browser errors').to.deep.equal([]);
      expect(watch.foreignRequests(from), 'requests leaving the server').to.deep.equal([]);
    }
    for (const d of started.splice(0)) await d.stop();
  });

  it('lists the nodes with their role, tags and executions, and on the leader how many wait', async () => {
    const view = (await api.json('GET', '/cluster')).body as Obj;
    const executor = (view['nodes'] as Obj[])[0]!['executor'] as Obj;
    const page = await openPage(`${origin}/ui/`);
    const row = page.locator('#cluster tr[data-node="n1"]');
    await row.waitFor();
    expect(await page.locator('#cluster').isVisible()).to.equal(true);
    expect(await page.locator('#node').innerText()).to.equal('node n1 · leader');
    expect(await row.locator('th').innerText()).to.equal('n1 (this node)');
    expect(await row.locator('td[data-label="Role"]').innerText()).to.equal('leader');
    expect(await row.locator('[data-field="tags"]').innerText()).to.equal('db, eu');
    expect(await row.locator('[data-field="running"]').innerText()).to.equal(`${executor['running']} of ${executor['capacity']}`);
    expect(await row.locator('td[data-label="Lag"]').innerText()).to.equal('0');
    expect(await row.locator('td[data-label="Last seen"]').innerText()).to.match(/ ago$/);
    expect(await page.locator('#cluster tbody tr').count()).to.equal(1);
    expect(await page.locator('[data-cluster="placement"]').innerText()).to.equal('No execution waits for a node.');
    await page.locator('#cluster').screenshot({ path: screenshotPath('ui-cluster-nodes.png') });
  });

  it('a job whose rule needs a tag no node has: its detail says what it waits for, the leader counts it', async () => {
    // A rule with tags is a record of format 6: taken once the cluster records it (the node
    // having read it for 30 s; tickd(8) UPGRADING).
    const rule = { pattern: 'gpu.', runner: { type: 'shell', command: 'true' }, on: ['gpu'] };
    await waitFor(async () => (await api.request('PUT', '/rules/gpu', { body: rule })).status === 200, 60_000, 'the cluster at format 6');
    expect((await api.request('PUT', '/jobs/gpu.a', { body: { execution: new Date().toISOString() } })).status).to.equal(200);
    let since = '';
    await waitFor(async () => {
      // The exact nanoseconds: from the text, JSON.parse would round them.
      since = /"waiting_for_node":\{"on":\["gpu"\],"since_ns":(\d+)\}/.exec((await api.request('GET', '/jobs/gpu.a')).text)?.[1] ?? '';
      return since !== '';
    }, 20_000, 'job gpu.a to wait for a node');
    const page = await openPage(`${origin}/ui/`);
    await page.locator('[data-cluster="placement"]', { hasText: '1 execution waits for a node having the tags its rule requires.' }).waitFor();
    await page.locator('#open-id').fill('gpu.a');
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Job gpu.a' });
    const wait = dialog.locator('[data-detail="waiting-for-node"]');
    await wait.waitFor();
    expect(await wait.innerText()).to.equal('waits for a node with the tag gpu');
    const dd = dialog.locator('dd:has([data-detail="waiting-for-node"])');
    expect(await dd.locator('code.ns').innerText()).to.equal(since);
    expect(await dd.locator('time').innerText()).to.match(ISO_NS);
    expect(await dd.locator('time').getAttribute('datetime')).to.equal(await dd.locator('time').innerText());
    expect(await dd.innerText()).to.match(/^waits for a node with the tag gpu since \S+ \d+ \((now|\d+ s ago)\)$/);
    await page.screenshot({ path: screenshotPath('ui-cluster-waiting.png') });
    // A phone: the nodes table and the detail stack without horizontal scrolling.
    const phone = await openPage(`${origin}/ui/`, 390, 844);
    await phone.locator('#cluster tr[data-node="n1"]').waitFor();
    expect(await phone.evaluate(OVERFLOW)).to.equal(0);
    await phone.locator('#cluster').screenshot({ path: screenshotPath('ui-cluster-nodes-phone.png') });
  });

  it('a node running alone shows no nodes table and never asks /cluster', async () => {
    const alone = await Daemon.start({ config: { http: { listen: '127.0.0.1:0' } } });
    started.push(alone);
    const page = await openPage(`http://${alone.http!.host}:${alone.http!.port}/ui/`);
    // The jobs listing was asked, so a refresh ran: /cluster would have been asked with it.
    expect(open.at(-1)!.watch.requests.some((r) => new URL(r).pathname === '/jobs')).to.equal(true);
    expect(open.at(-1)!.watch.requests.filter((r) => new URL(r).pathname === '/cluster')).to.deep.equal([]);
    expect(await page.locator('#cluster').isHidden()).to.equal(true);
    expect(await page.locator('#node').isHidden()).to.equal(true);
  });
});
