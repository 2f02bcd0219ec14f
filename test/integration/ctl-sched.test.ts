// `tickd ctl sched ...` against the real daemon (tickd-ctl(1) COMMANDS, SCHEDULES, OUTPUT):
// every schedule command in the table, --json and --raw, checked against what the daemon
// holds as a plain protocol client sees it; a bad field refused naming it, before anything is
// sent; an unknown schedule as not_found; a preview in the schedule's zone; a run now and a
// skip for overlap read back from the history; schedule identifiers completed by bash.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { Daemon, TICKD } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';
import { addrOf, ctl, ctlEnv } from '../helpers/ctl.ts';

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

/** A JSON document with every integer kept exact (as a bigint when it is too big for a number). */
function exactJson(text: string): unknown {
  return (JSON.parse as (t: string, r: (k: string, v: unknown, c: { source?: string }) => unknown) => unknown)(text, (_k, v, c) =>
    (typeof v === 'number' && c.source !== undefined && /^-?\d{16,}$/.test(c.source) ? BigInt(c.source) : v));
}

interface ScheduleDoc {
  id: string; cron: string | null; every: string | null; tz: string; start: bigint | null; end: bigint | null; limit: number | null;
  jitter: string; missed: string; catchup: string; overlap: string; paused: boolean; keep: number; next: bigint | null;
  fired: number; skipped: { missed: number; overlap: number };
}

interface OccurrenceDoc { nominal: bigint; job: string | null; outcome: string; reason?: string; from?: bigint; count?: number; manual?: boolean }

describe('tickd ctl sched', function () {
  this.timeout(90_000);
  let daemon: Daemon;
  let client: LineClient;
  let A: string[];

  /** Runs ctl against the daemon and expects success with nothing on stderr. */
  async function ok(...args: string[]): Promise<string> {
    const r = await ctl([...A, ...args]);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0);
    expect(r.stderr).to.equal('');
    return r.stdout;
  }

  before(async () => {
    daemon = await Daemon.start({ workers: 1 });
    client = await LineClient.connect(daemon.tcp);
    A = ['--addr', addrOf(daemon.tcp)];
  });
  after(async () => {
    client?.close();
    await daemon?.stop();
  });

  it('set: the fields as KEY=VALUE words, a cron expression with spaces in one of them', async () => {
    const table = await ok('sched', 'set', 'nightly.backup', 'cron=30 2 * * *', 'tz=Europe/Berlin', 'missed=skip');
    expect(table.split('\n').slice(0, 4)).to.deep.equal(['FIELD            VALUE', 'id               nightly.backup', 'cron             30 2 * * *', 'tz               Europe/Berlin']);
    expect(table).to.match(/^missed {11}skip$/m);
    expect(table).to.match(/^next {13}\d{4}-\d{2}-\d{2}T01:30:00\.000000000Z$/m);
    const [held] = await client.request('g', 'SCHEDULE GET nightly.backup');
    expect(held).to.match(/^g OK nightly\.backup "cron=30 2 \* \* \*" tz=Europe\/Berlin jitter=0s missed=skip catchup=1h overlap=allow paused=false keep=10 next=\d+ fired=0 skipped_missed=0 skipped_overlap=0$/);
  });

  it('set --json: the HTTP shape with every default filled in; start from a relative WHEN', async () => {
    const before = nowNs();
    const doc = exactJson(await ok('sched', 'set', 'fast.tick', 'every=90s', 'paused=true', 'start=+1h', 'limit=3', '--json')) as ScheduleDoc;
    expect(doc).to.deep.include({ id: 'fast.tick', cron: null, every: '1m30s', tz: 'UTC', end: null, limit: 3, jitter: '0s', missed: 'once', catchup: '1h', overlap: 'allow', paused: true, keep: 10, fired: 0 });
    expect(doc.skipped).to.deep.equal({ missed: 0, overlap: 0 });
    expect(doc.start! >= before + 3_600_000_000_000n && doc.start! <= nowNs() + 3_600_000_000_000n, String(doc.start)).to.equal(true);
    expect((await client.request('g', 'SCHEDULE GET fast.tick'))[0]).to.include(` start=${doc.start} limit=3 `);
  });

  it('get: table, --json and --raw; --raw is the daemon\'s answer as it stands', async () => {
    const raw = await ok('sched', 'get', 'nightly.backup', '--raw');
    const [held] = await client.request('g', 'SCHEDULE GET nightly.backup');
    expect(raw).to.equal(`${held!.slice(2)}\n`);
    const doc = exactJson(await ok('sched', 'get', 'nightly.backup', '--json')) as ScheduleDoc;
    expect(doc).to.deep.include({ id: 'nightly.backup', cron: '30 2 * * *', every: null, tz: 'Europe/Berlin', missed: 'skip', paused: false });
    expect(raw).to.include(` next=${doc.next} `);
  });

  it('a bad field is a usage error naming it, and nothing is sent', async () => {
    const r = await ctl([...A, 'sched', 'set', 'bad.zone', 'every=1m', 'tz=Mars/Olympus']);
    expect(r).to.deep.equal({ code: 2, stdout: '', stderr: 'tickd ctl: tz: "Mars/Olympus" is not a time zone this tickd\'s zone database knows\n' });
    const words = await ctl([...A, 'sched', 'set', 'bad.words', 'cron=0', '30', '2', '*', '*', '*']);
    expect(words.code).to.equal(2);
    expect(words.stderr).to.match(/^tickd ctl: expected KEY=VALUE, not "30"/);
    expect(await client.request('g', 'SCHEDULE GET bad.zone')).to.deep.equal(['g ERROR not_found schedule "bad.zone" does not exist']);
  });

  it('an unknown schedule is not_found, exit 1, nothing on stdout', async () => {
    for (const args of [['get'], ['next'], ['pause'], ['run'], ['history', '--json'], ['rm']]) {
      const r = await ctl([...A, 'sched', args[0]!, 'no.such', ...args.slice(1)]);
      expect(r, args[0]).to.deep.equal({ code: 1, stdout: '', stderr: 'tickd ctl: not_found: schedule "no.such" does not exist\n' });
    }
  });

  it('ls PREFIX: table, a JSON array, raw lines', async () => {
    const table = await ok('sched', 'ls');
    const lines = table.trimEnd().split('\n');
    expect(lines[0]).to.match(/^ID +SPEC +TZ +NEXT +PAUSED +FIRED +SKIPPED$/);
    expect(lines.slice(1).map((l) => l.split(/ {2,}/))).to.deep.include.members([
      ['fast.tick', 'every 1m30s', 'UTC', 'none', 'true', '0', '0'],
    ]);
    expect(lines.find((l) => l.startsWith('nightly.backup'))).to.match(/^nightly\.backup +30 2 \* \* \* +Europe\/Berlin +\d{4}-\d{2}-\d{2}T01:30:00\.000000000Z +false +0 +0$/);
    const docs = exactJson(await ok('sched', 'ls', 'nightly.', '--json')) as ScheduleDoc[];
    expect(docs.map((d) => d.id)).to.deep.equal(['nightly.backup']);
    expect(typeof docs[0]!.next).to.equal('bigint');
    const raw = await ok('sched', 'ls', 'fast.', '--raw');
    const listed = await client.request('l', 'SCHEDULE LIST fast.');
    expect(raw).to.equal(listed.map((l) => `${l.slice(2)}\n`).join(''));
    expect(await ok('sched', 'ls', 'nothing.here.')).to.equal('');
  });

  it('next: the daemon\'s instants; the table shows them in UTC and in the schedule\'s zone', async () => {
    const json = exactJson(await ok('sched', 'next', 'nightly.backup', '3', '--json')) as bigint[];
    const wire = await client.request('n', 'SCHEDULE NEXT nightly.backup 3');
    expect(json.map(String)).to.deep.equal(wire.slice(0, -1).map((l) => l.slice(2)));
    expect(json).to.have.length(3);
    const table = (await ok('sched', 'next', 'nightly.backup', '3')).trimEnd().split('\n');
    expect(table[0]).to.match(/^NEXT +LOCAL$/);
    expect(table).to.have.length(4);
    for (const row of table.slice(1)) {
      // 02:30 in Berlin is 01:30Z in winter (+01:00) and 00:30Z in summer (+02:00).
      const m = /^\d{4}-\d{2}-\d{2}T(\d{2}):30:00\.000000000Z {2}\d{4}-\d{2}-\d{2}T02:30:00\.000000000\+0(\d):00$/.exec(row);
      expect(m, row).to.not.equal(null);
      expect(Number(m![1]) + Number(m![2]), row).to.equal(2);
    }
    expect((await ok('sched', 'next', 'nightly.backup', '--raw')).split('\n')).to.have.length(7); // 5 instants, OK, ''
  });

  it('pause and resume: the schedule as the daemon holds it after each', async () => {
    const paused = exactJson(await ok('sched', 'pause', 'nightly.backup', '--json')) as ScheduleDoc;
    expect(paused.paused).to.equal(true);
    expect((await client.request('g', 'SCHEDULE GET nightly.backup'))[0]).to.include(' paused=true ');
    expect(await ok('sched', 'resume', 'nightly.backup')).to.match(/^paused {11}false$/m);
    expect((await client.request('g', 'SCHEDULE GET nightly.backup'))[0]).to.include(' paused=false ');
  });

  it('run prints the manual occurrence\'s job, which the history shows marked manual', async () => {
    const job = (await ok('sched', 'run', 'nightly.backup')).trimEnd();
    expect(job).to.match(/^nightly\.backup:manual-\d{8}T\d{6}(\.\d{1,9})?Z$/);
    expect((await client.request('g', `GET ${job}`))[0]).to.match(/^g OK (planned|triggered|executed|failed) \d+$/);
    const history = exactJson(await ok('sched', 'history', 'nightly.backup', '--json')) as OccurrenceDoc[];
    const entry = history.find((o) => o.job === job);
    expect(entry, JSON.stringify(history, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).to.not.equal(undefined);
    expect(entry!.manual).to.equal(true);
    const table = (await ok('sched', 'history', 'nightly.backup', '1')).trimEnd().split('\n');
    expect(table[0]).to.match(/^NOMINAL +OUTCOME +JOB +REASON$/);
    expect(table).to.have.length(2);
    expect(table[1]).to.match(new RegExp(`^\\d{4}-\\d{2}-\\d{2}T[\\d:.]{18}Z +(planned|triggered|executed|failed) +${job.replace(/\./g, '\\.')} +manual$`));
    const json = exactJson(await ok('sched', 'run', 'nightly.backup', '--json')) as { id: string; job: string };
    expect(json.id).to.equal('nightly.backup');
    expect(json.job).to.match(/^nightly\.backup:manual-/);
  });

  it('history shows a skip for overlap with its reason', async () => {
    expect(await client.request('r', 'RULE SET r.overlap overlap. shell "sleep 2"')).to.deep.equal(['r OK']);
    await ok('sched', 'set', 'overlap.tick', 'every=1s', 'overlap=skip');
    const deadline = Date.now() + 20_000;
    let lines: string[] = [];
    while (!lines.some((l) => / skipped - reason=overlap /.test(l))) {
      expect(Date.now() < deadline, `no overlap skip in time: ${lines.join(' | ')}`).to.equal(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
      lines = await client.request('h', 'SCHEDULE HISTORY overlap.tick 100');
    }
    await ok('sched', 'pause', 'overlap.tick');
    const history = exactJson(await ok('sched', 'history', 'overlap.tick', '100', '--json')) as OccurrenceDoc[];
    const skip = history.find((o) => o.outcome === 'skipped')!;
    expect(skip).to.deep.include({ job: null, reason: 'overlap' });
    expect(typeof skip.from).to.equal('bigint');
    expect(skip.count).to.be.at.least(1);
    const table = await ok('sched', 'history', 'overlap.tick', '100');
    expect(table).to.match(/ skipped +- +overlap( \(\d+ from \d{4}-\d{2}-\d{2}T[\d:.]{18}Z\))?$/m);
    const doc = exactJson(await ok('sched', 'get', 'overlap.tick', '--json')) as ScheduleDoc;
    expect(doc.skipped.overlap).to.be.at.least(1);
  });

  it('rm: nothing printed, the schedule gone; --json names it', async () => {
    expect(await ok('sched', 'rm', 'fast.tick')).to.equal('');
    expect(await client.request('g', 'SCHEDULE GET fast.tick')).to.deep.equal(['g ERROR not_found schedule "fast.tick" does not exist']);
    expect(await ok('sched', 'rm', 'overlap.tick', '--json')).to.equal('{"removed":["overlap.tick"]}\n');
  });

  it('bash completes schedule identifiers from the daemon, and sched set\'s keys', async function () {
    if (spawnSync('bash', ['-c', 'true']).status !== 0) this.skip();
    const script = (await ctl(['completion', 'bash'])).stdout;
    const env = ctlEnv({ PATH: `${dirname(TICKD)}:${dirname(process.execPath)}:${process.env['PATH']}`, TICKD_ADDR: addrOf(daemon.tcp) });
    const complete = (line: string): string[] => {
      const words = line.split(' ');
      const probe = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _tickd; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const r = spawnSync('bash', ['-c', probe], { encoding: 'utf8', env });
      return r.stdout.split('\n').filter((l) => l !== '');
    };
    expect(complete('tickd ctl sched get nig')).to.deep.equal(['nightly.backup']);
    expect(complete('tickd ctl sched set nightly.backup t')).to.deep.equal(['tz=']);
  });
});
