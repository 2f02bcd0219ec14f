// Schedules over TCP on the real daemon (tickd-protocol(7) SCHEDULES): every SCHEDULE
// instruction and its reply, the refusals naming the field, unknown schedules, an occurrence
// that really runs and what its runner is told, and the namespace of a token.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { tokenize } from '../../lib/protocol/tokenize.ts';
import { parseOccurrenceId } from '../../lib/schedule/occurrence.ts';

const TOKENS = fileURLToPath(new URL('../fixtures/auth/tokens.toml', import.meta.url));
const DENIED = 'ERROR auth_denied insufficient namespace scope';
const HOUR = 3_600_000_000_000n;

async function login(daemon: Daemon, secret: string): Promise<LineClient> {
  const c = await LineClient.connect(daemon.tcp);
  c.write(`AUTH ${secret}\n`);
  expect(await c.readLine()).to.equal('OK');
  return c;
}

/** The `key=value` tokens of a schedule line (after `<rid> OK` or `<rid>`), as a map. */
function fieldsOf(line: string): Map<string, string> {
  const tokens = tokenize(line)!;
  const start = tokens[1] === 'OK' ? 3 : 2;
  return new Map(tokens.slice(start).map((t) => [t.slice(0, t.indexOf('=')), t.slice(t.indexOf('=') + 1)]));
}

describe('schedules over TCP', function () {
  this.timeout(30000);
  let daemon: Daemon;
  let c: LineClient;
  before(async () => { daemon = await Daemon.start({ workers: 2, config: { controller: { auth_file: TOKENS } } }); });
  after(async () => { await daemon?.stop(); });
  beforeEach(async () => { c = await login(daemon, 'secret-admin'); });
  afterEach(() => c.close());

  it('SET answers the schedule with every default, GET the same, and the line sets the same schedule again', async () => {
    const set = await c.request('s', 'SCHEDULE SET nightly.backup "cron=30 2 * * *" tz=Europe/Berlin');
    expect(set).to.have.length(1);
    expect(set[0]).to.match(/^s OK nightly\.backup "cron=30 2 \* \* \*" tz=Europe\/Berlin jitter=0s missed=once catchup=1h overlap=allow paused=false keep=10 next=\d+ fired=0 skipped_missed=0 skipped_overlap=0$/);
    const next = BigInt(fieldsOf(set[0]!).get('next')!);
    expect(next > nowNs() && next < nowNs() + 25n * HOUR).to.equal(true);
    // 02:30 in Berlin is 00:30 or 01:30 UTC: a whole half hour.
    expect(next % (HOUR / 2n)).to.equal(0n);
    const get = await c.request('g', 'SCHEDULE GET nightly.backup');
    expect(get).to.deep.equal([set[0]!.replace(/^s /, 'g ')]);
    const options = tokenize(get[0]!)!.slice(3).filter((t) => !/^(next|fired|skipped_missed|skipped_overlap)=/.test(t));
    const again = await c.request('a', `SCHEDULE SET nightly.backup ${options.map((t) => `"${t.replace(/["\\]/g, '\\$&')}"`).join(' ')}`);
    expect(again).to.deep.equal([set[0]!.replace(/^s /, 'a ')]);
    expect(await c.request('r', 'SCHEDULE REMOVE nightly.backup')).to.deep.equal(['r OK']);
  });

  it('NEXT previews the calendar: 5 by default, n on request', async () => {
    await c.request('s', 'SCHEDULE SET nx.hourly every=1h');
    const five = await c.request('n', 'SCHEDULE NEXT nx.hourly');
    expect(five).to.have.length(6);
    expect(five.at(-1)).to.equal('n OK');
    const instants = five.slice(0, -1).map((l) => BigInt(l.split(' ')[1]!));
    expect(instants[0]! > nowNs() && instants[0]! <= nowNs() + HOUR).to.equal(true);
    instants.forEach((at, i) => {
      expect(at % HOUR, 'aligned to the epoch').to.equal(0n);
      if (i > 0) expect(at - instants[i - 1]!).to.equal(HOUR);
    });
    const two = await c.request('m', 'SCHEDULE NEXT nx.hourly 2');
    expect(two).to.deep.equal([`m ${instants[0]}`, `m ${instants[1]}`, 'm OK']);
    expect(await c.request('e', 'SCHEDULE NEXT nx.hourly 101')).to.deep.equal(['e ERROR invalid_args count must be an integer from 1 to 100, not "101"']);
  });

  it('LIST lists by prefix, a line each and OK; PAUSE and RESUME answer the schedule', async () => {
    for (const id of ['ls.one', 'ls.two', 'lsx.three']) expect((await c.request('s', `SCHEDULE SET ${id} every=1m`))[0]).to.match(/^s OK /);
    const listed = await c.request('l', 'SCHEDULE LIST ls.');
    expect(listed.at(-1)).to.equal('l OK');
    expect(listed.slice(0, -1).map((l) => l.split(' ')[1]).sort()).to.deep.equal(['ls.one', 'ls.two']);
    expect(await c.request('n', 'SCHEDULE LIST nothing.here.')).to.deep.equal(['n OK']);

    const paused = await c.request('p', 'SCHEDULE PAUSE ls.one');
    expect(fieldsOf(paused[0]!).get('paused')).to.equal('true');
    expect(fieldsOf(paused[0]!).get('next')).to.equal('none');
    expect(fieldsOf((await c.request('g', 'SCHEDULE GET ls.one'))[0]!).get('paused')).to.equal('true');
    const resumed = await c.request('r', 'SCHEDULE RESUME ls.one');
    expect(fieldsOf(resumed[0]!).get('paused')).to.equal('false');
    expect(fieldsOf(resumed[0]!).get('next')).to.match(/^\d+$/);
  });

  it('RUN makes a manual occurrence job; HISTORY shows it and how it ended; REMOVE, then not_found', async () => {
    // Its calendar starts in 2100: the only occurrence is the manual one.
    expect((await c.request('s', 'SCHEDULE SET man.x every=1d start=2100-01-01T00:00:00Z'))[0]).to.match(/^s OK man\.x every=1d tz=UTC start=4102444800000000000 /);
    const ran = await c.request('r', 'SCHEDULE RUN man.x');
    expect(ran).to.have.length(1);
    const job = ran[0]!.replace(/^r OK /, '');
    expect(job).to.match(/^man\.x:manual-\d{8}T\d{6}(\.\d+)?Z$/);
    expect(parseOccurrenceId(job)).to.include({ schedule: 'man.x', manual: true });
    // No rule matches man.x: the job fails, as any such job does.
    await waitFor(async () => (await c.request('g', `GET ${job}`))[0]!.startsWith('g OK failed '), 10000, 'the manual run to fail');
    const history = await c.request('h', 'SCHEDULE HISTORY man.x');
    expect(history).to.deep.equal([`h ${parseOccurrenceId(job)!.nominal} failed ${job} manual`, 'h OK']);
    expect(await c.request('d', 'SCHEDULE REMOVE man.x')).to.deep.equal(['d OK']);
    expect(await c.request('g', 'SCHEDULE GET man.x')).to.deep.equal(['g ERROR not_found schedule "man.x" does not exist']);
    // A fired occurrence stays, as an ordinary job.
    expect((await c.request('j', `GET ${job}`))[0]).to.match(/^j OK failed \d+$/);
  });

  it('an every-second schedule runs its occurrences, each runner told the schedule and the nominal time', async () => {
    const out = join(daemon.dir, 'occurrences.txt');
    expect(await c.request('r', `RULE SET tick tick. shell "echo $TICKD_SCHEDULE $TICKD_NOMINAL_NS $TICKD_JOB_ID >> ${out}"`)).to.deep.equal(['r OK']);
    expect((await c.request('s', 'SCHEDULE SET tick.sec every=1s'))[0]).to.match(/^s OK tick\.sec every=1s /);
    await waitFor(() => existsSync(out) && readFileSync(out, 'utf8').split('\n').filter(Boolean).length >= 2, 10000, 'two occurrences');
    expect(await c.request('p', 'SCHEDULE REMOVE tick.sec')).to.deep.equal(['p OK']);
    const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    for (const line of lines) {
      const [schedule, nominal, job] = line.split(' ');
      expect(schedule, line).to.equal('tick.sec');
      expect(parseOccurrenceId(job!), line).to.deep.equal({ schedule: 'tick.sec', nominal: BigInt(nominal!), manual: false });
      expect(BigInt(nominal!) % 1_000_000_000n, line).to.equal(0n);
    }
    expect(new Set(lines).size, 'no occurrence twice').to.equal(lines.length);
  });

  it('HISTORY lists fired occurrences newest first, within the count asked for', async () => {
    await c.request('r', 'RULE SET hist hist. direct /bin/true');
    await c.request('s', 'SCHEDULE SET hist.sec every=1s');
    await waitFor(async () => (await c.request('h', 'SCHEDULE HISTORY hist.sec')).filter((l) => / executed /.test(l)).length >= 3, 10000, 'three executed');
    await c.request('p', 'SCHEDULE PAUSE hist.sec');
    const two = await c.request('h', 'SCHEDULE HISTORY hist.sec 2');
    expect(two).to.have.length(3);
    const nominals = two.slice(0, -1).map((l) => {
      const [, nominal, , job] = l.split(' ');
      expect(job, l).to.match(/^hist\.sec:\d{8}T\d{6}Z$/);
      expect(parseOccurrenceId(job!)!.nominal).to.equal(BigInt(nominal!));
      return BigInt(nominal!);
    });
    expect(nominals[0]! > nominals[1]!).to.equal(true);
    const fired = Number(fieldsOf((await c.request('g', 'SCHEDULE GET hist.sec'))[0]!).get('fired'));
    expect(fired).to.be.at.least(3);
    await c.request('d', 'SCHEDULE REMOVE hist.sec');
  });

  it('refusals name the field, and change nothing', async () => {
    const cases: Array<[string, string]> = [
      ['SCHEDULE SET bad.x every=1m overlap=never', 'e ERROR invalid_args overlap: must be allow, skip or queue'],
      ['SCHEDULE SET bad.x every=1m hourly', 'e ERROR invalid_args expected key=value, not "hourly"'],
      ['SCHEDULE SET bad.x every=1m every=2m', 'e ERROR invalid_args every: given twice'],
      ['SCHEDULE SET bad.x "cron=* * * * *" every=1m', 'e ERROR invalid_args every: give exactly one of cron and every'],
      ['SCHEDULE SET bad.x every=1m tz=Mars/Olympus', 'e ERROR invalid_args tz: "Mars/Olympus" is not a time zone this tickd\'s zone database knows'],
      ['SCHEDULE SET bad.x every=1m colour=blue', 'e ERROR invalid_args colour: unknown field (known: cron, every, tz, start, end, limit, jitter, missed, catchup, overlap, paused, keep)'],
      ['SCHEDULE SET bad/x every=1m', "e ERROR invalid_args schedule identifier contains invalid character '/' (allowed: letters, digits, . - _ :)"],
      ['SCHEDULE GET', 'e ERROR invalid_args missing schedule identifier'],
    ];
    for (const [line, reply] of cases) expect(await c.request('e', line), line).to.deep.equal([reply]);
    expect(await c.request('g', 'SCHEDULE GET bad.x')).to.deep.equal(['g ERROR not_found schedule "bad.x" does not exist']);
  });

  it('every instruction on an unknown schedule is not_found', async () => {
    for (const sub of ['GET', 'REMOVE', 'NEXT', 'PAUSE', 'RESUME', 'RUN', 'HISTORY']) {
      expect(await c.request('u', `SCHEDULE ${sub} no.such`), sub).to.deep.equal(['u ERROR not_found schedule "no.such" does not exist']);
    }
  });

  it('SCHEDULE with an unknown sub-instruction gets no reply, the next line does', async () => {
    c.write('u SCHEDULE FROB x\n');
    expect(await c.request('k', 'SCHEDULE LIST no.such.')).to.deep.equal(['k OK']);
  });

  it('a token manages only the schedules in its namespace, and lists only those', async () => {
    const a = await login(daemon, 'secret-a');
    try {
      expect((await a.request('1', 'SCHEDULE SET a.mine every=1h'))[0]).to.match(/^1 OK a\.mine /);
      expect(await a.request('2', 'SCHEDULE SET b.theirs every=1h')).to.deep.equal([`2 ${DENIED}`]);
      expect((await c.request('3', 'SCHEDULE SET b.theirs every=1h'))[0]).to.match(/^3 OK b\.theirs /);
      for (const sub of ['GET', 'REMOVE', 'NEXT', 'PAUSE', 'RESUME', 'RUN', 'HISTORY']) {
        expect(await a.request('4', `SCHEDULE ${sub} b.theirs`), sub).to.deep.equal([`4 ${DENIED}`]);
      }
      const listed = await a.request('5', 'SCHEDULE LIST');
      expect(listed.at(-1)).to.equal('5 OK');
      expect(listed.slice(0, -1).map((l) => l.split(' ')[1])).to.deep.equal(['a.mine']);
      expect((await c.request('6', 'SCHEDULE LIST b.'))).to.have.length(2);
      expect(await a.request('7', 'SCHEDULE REMOVE a.mine')).to.deep.equal(['7 OK']);
    } finally {
      a.close();
    }
  });
});
