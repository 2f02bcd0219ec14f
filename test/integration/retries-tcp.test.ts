// ATTEMPTS and RETRY (issue 38; tickd-protocol(7) COMMANDS, RETRIES AND LIMITS) against the
// real daemon: the attempt history of a job a retry policy ran twice, read over TCP; a failed
// job run again, its policy afresh; the refusals of RETRY and ATTEMPTS.
import { expect } from 'chai';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, jobStatus, nowNs, waitFor } from '../helpers/client.ts';
import { tokenize } from '../../lib/protocol/tokenize.ts';

const MS = 1_000_000n;

interface AttemptLine {
  readonly attempt: number;
  readonly started: bigint;
  readonly lateness: bigint;
  readonly held: bigint;
  readonly duration: bigint;
  readonly result: string;
  readonly summary: string;
}

describe('ATTEMPTS and RETRY over TCP', function () {
  this.timeout(60_000);
  let daemon: Daemon;
  let client: LineClient;

  before(async () => {
    daemon = await Daemon.start();
    client = await LineClient.connect(daemon.tcp);
    expect(await client.request('r1', 'RULE SET f f. retry.attempts=2 retry.backoff=fixed retry.delay=200ms shell "exit 3"')).to.deep.equal(['r1 OK']);
    expect(await client.request('r2', 'RULE SET w w. retry.attempts=2 retry.backoff=fixed retry.delay=1h shell "exit 3"')).to.deep.equal(['r2 OK']);
    expect(await client.request('r3', 'RULE SET ok ok. shell "exit 0"')).to.deep.equal(['r3 OK']);
  });
  after(async () => {
    client?.close();
    await daemon?.stop();
  });

  /** ATTEMPTS' lines read into fields, the terminal `OK` checked. */
  const attempts = async (id: string): Promise<AttemptLine[]> => {
    const lines = await client.request('a', `ATTEMPTS ${id}`);
    expect(lines.at(-1), lines.join('\n')).to.equal('a OK');
    return lines.slice(0, -1).map((line) => {
      const t = tokenize(line)!;
      expect(t, line).to.have.length(8);
      expect(t[0]).to.equal('a');
      return {
        attempt: Number(t[1]), started: BigInt(t[2]!), lateness: BigInt(t[3]!), held: BigInt(t[4]!), duration: BigInt(t[5]!), result: t[6]!, summary: t[7]!,
      };
    });
  };
  const settledAs = (id: string, status: string): Promise<void> =>
    waitFor(async () => (await jobStatus(client, id)) === status, 20_000, `${id} ${status}`);

  it('ATTEMPTS lists the attempts of a failed job, oldest first, the backoff between them', async () => {
    expect(await client.request('s', `SET f.1 ${nowNs()}`)).to.deep.equal(['s OK']);
    await settledAs('f.1', 'failed');
    const raw = await client.request('a', 'ATTEMPTS f.1');
    expect(raw).to.have.length(3);
    expect(raw[0]).to.match(/^a 1 \d+ -?\d+ 0 \d+ failure "exit status 3"$/);
    expect(raw[1]).to.match(/^a 2 \d+ -?\d+ 0 \d+ failure "exit status 3"$/);
    const [first, second] = await attempts('f.1');
    // The wait is counted from the end of the first attempt (start plus duration).
    expect(second!.started - (first!.started + first!.duration) >= 190n * MS, `${second!.started - first!.started - first!.duration} ns`).to.equal(true);
    expect(second!.started - first!.started < 10_000n * MS).to.equal(true);
  });

  it('RETRY answers as GET, with the time it planned the job at, and runs a failed job again, its policy afresh; its history stays beside the new attempts', async () => {
    expect(await jobStatus(client, 'f.1')).to.equal('failed');
    const before = nowNs();
    const [answer] = await client.request('r', 'RETRY f.1');
    expect(answer).to.match(/^r OK planned \d+$/);
    const execution = BigInt(answer!.split(' ')[3]!);
    expect(execution >= before && execution <= nowNs() + MS, String(execution)).to.equal(true);
    await waitFor(async () => (await attempts('f.1')).length === 4 && (await jobStatus(client, 'f.1')) === 'failed', 20_000, 'f.1 failed again');
    const history = await attempts('f.1');
    expect(history.map((a) => [a.attempt, a.result, a.summary])).to.deep.equal([
      [1, 'failure', 'exit status 3'], [2, 'failure', 'exit status 3'], [1, 'failure', 'exit status 3'], [2, 'failure', 'exit status 3'],
    ]);
    expect(history[2]!.started >= execution).to.equal(true);
  });

  it('RETRY refuses a job that is not failed: planned, waiting for its next attempt, executed', async () => {
    expect(await client.request('s', `SET f.later ${nowNs() + 3_600_000n * MS}`)).to.deep.equal(['s OK']);
    expect(await client.request('r', 'RETRY f.later')).to.deep.equal(['r ERROR invalid_args job "f.later" is planned: only a failed job is run again']);

    expect(await client.request('s', `SET w.1 ${nowNs()}`)).to.deep.equal(['s OK']);
    await waitFor(async () => (await attempts('w.1')).length === 1, 20_000, 'w.1 tried once');
    expect(await jobStatus(client, 'w.1')).to.equal('triggered');
    expect(await client.request('r', 'RETRY w.1')).to.deep.equal(['r ERROR invalid_args job "w.1" is waiting for its next attempt: only a failed job is run again']);

    expect(await client.request('s', `SET ok.1 ${nowNs()}`)).to.deep.equal(['s OK']);
    await settledAs('ok.1', 'executed');
    const [done] = await attempts('ok.1');
    expect(done).to.include({ attempt: 1, held: 0n, result: 'success', summary: 'exit status 0' });
    expect(await client.request('r', 'RETRY ok.1')).to.deep.equal(['r ERROR invalid_args job "ok.1" is executed: only a failed job is run again']);
    expect(await jobStatus(client, 'ok.1')).to.equal('executed');
  });

  it('ATTEMPTS of a job not run yet is OK alone; a missing job is not_found; bad arguments are invalid_args', async () => {
    expect(await client.request('a', 'ATTEMPTS f.later')).to.deep.equal(['a OK']);
    expect(await client.request('a', 'ATTEMPTS f.none')).to.deep.equal(['a ERROR not_found job "f.none" does not exist']);
    expect(await client.request('r', 'RETRY f.none')).to.deep.equal(['r ERROR not_found job "f.none" does not exist']);
    expect(await client.request('a', 'ATTEMPTS f.1 extra')).to.deep.equal(['a ERROR invalid_args unexpected argument "extra" after the job identifier']);
    expect(await client.request('r', 'RETRY')).to.deep.equal(['r ERROR invalid_args missing job identifier']);
  });
});
