// The leader lease (lib/lease) against real nats-server processes: one server per test, so a
// test may stop or kill it, and one 3-server cluster for the replicated bucket. TTLs are short
// (600 ms) to keep the file fast; every wait is on a condition, with a deadline.
import { expect } from 'chai';
import bunyan from 'bunyan';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { isLeaseAborted, Lease, openLeaseBucket, type LeaseOptions } from '../../lib/lease/lease.ts';
import { closeNatsClients, connectNats, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { pause } from '../helpers/procfs.ts';

const TTL = 600;
/** Timer lateness and loopback round trips on a busy test machine. */
const SLACK = 250;

interface LogRecord { msg: string; [k: string]: unknown }

function capturingLogger(): { log: bunyan; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const stream = { write: (r: object) => { records.push(r as LogRecord); } };
  const log = bunyan.createLogger({ name: 'lease-test', streams: [{ type: 'raw', level: 'debug', stream }] });
  return { log, records };
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface TestLease {
  readonly lease: Lease;
  readonly lost: string[];
  readonly records: LogRecord[];
}

const WAITING = 'lease held by another node; waiting';

describe('leader lease (lib/lease)', function () {
  let bin: string;
  let nats: NatsCluster;
  let nc: NatsConnection;
  let kv: KV;
  let made: Lease[] = [];

  before(function () { bin = requireNatsServer(this); });

  beforeEach(async function () {
    nats = await startNats(bin, 1);
    nc = await connectNats(nats.urls);
    kv = await openLeaseBucket(nc, 'lt', TTL, 1);
  });

  afterEach(async function () {
    for (const l of made) l.close();
    made = [];
    if (nats !== undefined) {
      for (const s of nats.servers) s.proc.kill('SIGCONT');
      await nats.stop();
    }
    await closeNatsClients();
  });

  function newLease(name: string, extra: Partial<LeaseOptions> = {}): TestLease {
    const lost: string[] = [];
    const { log, records } = capturingLogger();
    const lease = new Lease({
      kv, holder: `${name}/${process.pid}/t`, ttlMs: TTL, log, onLost: (why) => { lost.push(why); }, ...extra,
    });
    made.push(lease);
    return { lease, lost, records };
  }

  const waits = (t: TestLease) => t.records.filter((r) => r.msg === WAITING);

  it('stores who holds it, and a second lease waits until the first stops refreshing, then takes it after the TTL', async function () {
    const a = newLease('node-a');
    await a.lease.acquire(() => false);
    expect(a.lease.held).to.equal(true);
    const stored = (await kv.get('leader'))!.json<Record<string, string>>();
    expect(stored).to.include({ node: 'node-a', holder: `node-a/${process.pid}/t` });
    expect(Date.parse(stored['acquiredAt']!)).to.be.closeTo(Date.now(), 5000);

    const b = newLease('node-b');
    let bAt: number | null = null;
    const bDone = b.lease.acquire(() => false).then(() => { bAt = performance.now(); });

    // A keeps it alive across more than a TTL of refreshes (each one a new revision): B stays out.
    const rev0 = (await kv.get('leader'))!.revision;
    await until('five refreshes by A', async () => (await kv.get('leader'))!.revision >= rev0 + 5);
    expect(bAt).to.equal(null);
    expect(a.lease.held).to.equal(true);
    expect(waits(b)).to.have.length(1); // logged once, not once per try
    expect(waits(b)[0]).to.include({ heldBy: `node-a/${process.pid}/t`, heldByNode: 'node-a' });

    // A stops refreshing without releasing (a crash, as far as the key can tell).
    const aHeldUntil = a.lease.heldUntil!;
    const stoppedAt = performance.now();
    a.lease.close();
    expect(a.lease.held).to.equal(false);
    await bDone;
    expect(b.lease.held).to.equal(true);
    // Never before A's claim ran out by A's own clock; within a TTL and a retry period after.
    expect(bAt!).to.be.at.least(aHeldUntil);
    expect(bAt! - stoppedAt).to.be.at.most(TTL + TTL / 4 + SLACK);
    expect(a.lost).to.deep.equal([]);
    expect(b.lost).to.deep.equal([]);
  });

  it('release() hands the lease over at once, without onLost', async function () {
    const a = newLease('node-a');
    await a.lease.acquire(() => false);
    const b = newLease('node-b');
    let bAt: number | null = null;
    const bDone = b.lease.acquire(() => false).then(() => { bAt = performance.now(); });
    await until('B waiting', () => waits(b).length > 0);

    const releasedAt = performance.now();
    await a.lease.release();
    expect(a.lease.held).to.equal(false);
    await bDone;
    // B's next try comes within TTL/4: far sooner than the key's TTL.
    expect(bAt! - releasedAt).to.be.below(TTL / 2);
    expect(b.lease.held).to.equal(true);
    expect(a.lost).to.deep.equal([]);
    expect((await kv.get('leader'))!.json<Record<string, string>>()['node']).to.equal('node-b');
  });

  it('a foreign write to the key makes the next refresh fail: onLost at once, and the lease can be taken again later', async function () {
    const a = newLease('node-a');
    await a.lease.acquire(() => false);
    await kv.put('leader', JSON.stringify({ node: 'intruder', holder: 'intruder/1/x', acquiredAt: new Date().toISOString() }));
    await until('onLost', () => a.lost.length > 0, TTL);
    expect(a.lost).to.have.length(1);
    expect(a.lost[0]).to.match(/^refresh refused: .*wrong last sequence/);
    expect(a.lease.held).to.equal(false);

    // From scratch: the intruder's key expires by the bucket TTL, then A takes it anew.
    await a.lease.acquire(() => false);
    expect(a.lease.held).to.equal(true);
    expect(waits(a)[0]).to.include({ heldBy: 'intruder/1/x' });
    expect(a.lost).to.have.length(1);
  });

  it('a monotonic clock jumped past the TTL (a SIGSTOP) makes held false at once, and onLost fires', async function () {
    let skew = 0;
    const a = newLease('node-a', { monotonicMs: () => performance.now() + skew });
    await a.lease.acquire(() => false);
    expect(a.lease.held).to.equal(true);
    skew += TTL;
    // Synchronously, before any timer or I/O callback could have run.
    expect(a.lease.held).to.equal(false);
    expect(a.lease.heldUntil).to.equal(null);
    await until('onLost', () => a.lost.length > 0, TTL);
    expect(a.lost).to.deep.equal(['expired by our own clock']);
  });

  it('loses the lease by its own clock while a refresh hangs (the NATS server is stopped), and can take it again after', async function () {
    const a = newLease('node-a');
    await a.lease.acquire(() => false);
    const stoppedAt = performance.now();
    await pause(nats.servers[0]!.proc.pid!);
    await until('onLost', () => a.lost.length > 0, 2 * TTL);
    // The last refresh that could succeed was sent before the stop.
    expect(performance.now() - stoppedAt).to.be.at.most(TTL + SLACK);
    expect(a.lease.held).to.equal(false);
    // The watchdog, not the hanging request's timeout (which ends a little later), tells.
    expect(a.lost).to.deep.equal(['expired by our own clock']);

    // The server resumes while that refresh may still be pending; whether it lands or not, the
    // same Lease takes the key again (dropping its own leftover, if any) and keeps it alive.
    nats.servers[0]!.proc.kill('SIGCONT');
    await a.lease.acquire(() => false);
    const rev0 = (await kv.get('leader'))!.revision;
    await until('four refreshes of the new tenure', async () => (await kv.get('leader'))!.revision >= rev0 + 4);
    expect(a.lease.held).to.equal(true);
    expect(a.lost).to.have.length(1);
  });

  it('a refresh of a lost tenure still hanging does not stop the next tenure of the same Lease from refreshing', async function () {
    // The real bucket, with one fault injected: while `hang` is set, update() waits on a gate
    // before it is sent (a request stuck on the way, which only this Lease's refresh sees).
    let hang = false;
    let openGate = () => {};
    const gate = new Promise<void>((r) => { openGate = r; });
    const hangingKv = new Proxy(kv, {
      get(target, prop) {
        const v = Reflect.get(target, prop) as unknown;
        if (prop === 'update') {
          return (...args: Parameters<KV['update']>) => (hang ? gate : Promise.resolve()).then(() => target.update(...args));
        }
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const a = newLease('node-a', { kv: hangingKv });
    await a.lease.acquire(() => false);
    hang = true;
    await until('onLost', () => a.lost.length > 0, 2 * TTL);
    expect(a.lost).to.deep.equal(['expired by our own clock']);
    hang = false;

    // The key expires on the server; the same Lease takes it anew while the old refresh hangs.
    await a.lease.acquire(() => false);
    const rev0 = (await kv.get('leader'))!.revision;
    await until('four refreshes of the new tenure', async () => (await kv.get('leader'))!.revision >= rev0 + 4);
    expect(a.lease.held).to.equal(true);

    // The old refresh goes out at last, with the old revision: refused, and ignored.
    openGate();
    const rev1 = (await kv.get('leader'))!.revision;
    await until('two more refreshes', async () => (await kv.get('leader'))!.revision >= rev1 + 2);
    expect(a.lease.held).to.equal(true);
    expect(a.lost).to.have.length(1);
  });

  it('acquire() rejects with a recognisable error when stopped() turns true, or on close()', async function () {
    const a = newLease('node-a');
    await a.lease.acquire(() => false);

    let stop = false;
    const b = newLease('node-b');
    const bDone = b.lease.acquire(() => stop).then(() => null, (err: unknown) => err);
    await until('B waiting', () => waits(b).length > 0);
    const stoppedAt = performance.now();
    stop = true;
    const err = await bDone;
    expect(isLeaseAborted(err), String(err)).to.equal(true);
    expect(performance.now() - stoppedAt).to.be.at.most(TTL / 4 + SLACK);
    expect(b.lease.held).to.equal(false);

    const c = newLease('node-c');
    const cDone = c.lease.acquire(() => false).then(() => null, (e: unknown) => e);
    await until('C waiting', () => waits(c).length > 0);
    c.lease.close();
    expect(isLeaseAborted(await cDone)).to.equal(true);
    expect(a.lease.held).to.equal(true);
  });
});

describe('lease bucket (lib/lease/bucket.ts)', function () {
  let bin: string;
  let nats: NatsCluster | undefined;

  before(function () { bin = requireNatsServer(this); });

  afterEach(async function () {
    await nats?.stop();
    nats = undefined;
    await closeNatsClients();
  });

  it('caps replicas to 1 on a lone server, raises a shorter TTL and keeps a longer one', async function () {
    nats = await startNats(bin, 1);
    const nc = await connectNats(nats.urls);
    const st = await (await openLeaseBucket(nc, 'bt', 800, 3)).status();
    expect(st).to.include({ bucket: 'bt-lease', history: 1, ttl: 800, replicas: 1 });
    expect((await (await openLeaseBucket(nc, 'bt', 1200, 3)).status()).ttl).to.equal(1200);
    const { log, records } = capturingLogger();
    expect((await (await openLeaseBucket(nc, 'bt', 500, 3, log)).status()).ttl).to.equal(1200);
    expect(records.map((r) => r.msg).join('\n')).to.match(/longer than our --lease-ttl/);
  });

  it('makes an R3 bucket on a 3-server cluster, and leases on different servers hand over', async function () {
    this.timeout(20_000);
    nats = await startNats(bin, 3);
    const [u1, u2] = nats.servers.map((s) => s.url);
    const nc1 = await connectNats(u1!);
    const nc2 = await connectNats(u2!);
    let kv1: KV | undefined;
    // The cluster elects its JetStream meta leader a moment after the servers listen.
    await until('an R3 bucket', async () => {
      try { kv1 = await openLeaseBucket(nc1, 'r3', TTL, 3); return true; } catch { return false; }
    }, 15_000);
    expect((await kv1!.status()).replicas).to.equal(3);
    const kv2 = await openLeaseBucket(nc2, 'r3', TTL, 3);

    const silent = () => capturingLogger().log;
    const a = new Lease({ kv: kv1!, holder: 'a/1/x', ttlMs: TTL, log: silent(), onLost: () => {} });
    const b = new Lease({ kv: kv2, holder: 'b/2/y', ttlMs: TTL, log: silent(), onLost: () => {} });
    try {
      await a.acquire(() => false);
      const bDone = b.acquire(() => false);
      await a.release();
      await bDone;
      expect(b.held).to.equal(true);
      expect((await kv1!.get('leader'))!.json<Record<string, string>>()['node']).to.equal('b');
    } finally {
      a.close();
      b.close();
    }
  });
});
