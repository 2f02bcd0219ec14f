// What the shell, direct and redis runners tell a receiver to deduplicate on (doc/execution.md
// "Keys to deduplicate on"); the http runner's are in http-keys.test.ts, the amqp runner's in
// amqp.test.ts.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from 'redis';
import type { RedisCommand } from '../../../lib/domain/runner-spec.ts';
import type { AttemptOutcome } from '../../../lib/domain/attempt.ts';
import { runDirect } from '../../../lib/runner/direct.ts';
import { executionKey } from '../../../lib/runner/execution-key.ts';
import type { Execution } from '../../../lib/runner/execution.ts';
import { runRedis } from '../../../lib/runner/redis.ts';
import { COMPANION_LIST_MAX } from '../../../lib/runner/redis-companion.ts';
import { runShell } from '../../../lib/runner/shell.ts';
import { requireService } from '../../helpers/services.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { capturingContext, EXECUTION_NS, makeExecution, neverAborted, waitFor } from '../../helpers/runner-context.ts';

const HOST = '127.0.0.1';

function numbered<E extends Execution>(exec: E, attemptNo: number | undefined): E {
  return attemptNo === undefined ? exec : { ...exec, attemptNo };
}

/** The record the redis companion holds for job `id`'s attempt `n`. */
function record(id: string, n: number): string {
  return `{"job_id":"${id}","execution":${EXECUTION_NS},"attempt":${n},"execution_key":"${executionKey(id, EXECUTION_NS, n)}"}`;
}

describe('runner keys: shell and direct environment', function () {
  this.timeout(20000);

  it('gives TICKD_ATTEMPT and TICKD_EXECUTION_KEY beside TICKD_JOB_ID: attempt 1 when the execution has no number', async () => {
    const dir = tempDir();
    const { ctx } = capturingContext();
    const write = (out: string) => `printf "%s|%s|%s" "$TICKD_JOB_ID" "$TICKD_ATTEMPT" "$TICKD_EXECUTION_KEY" > ${out}`;
    const shellSpec = { type: 'shell' as const, command: write(join(dir, 'shell')) };
    expect(await runShell(numbered(makeExecution(shellSpec, 'env.job'), undefined), shellSpec, ctx, neverAborted())).to.include({ kind: 'exit', status: 0 });
    const directSpec = { type: 'direct' as const, executable: '/bin/sh', args: ['-c', write(join(dir, 'direct'))] };
    expect(await runDirect(numbered(makeExecution(directSpec, 'env.job'), 3), directSpec, ctx, neverAborted())).to.include({ kind: 'exit', status: 0 });
    expect(readFileSync(join(dir, 'shell'), 'utf8')).to.equal(`env.job|1|${executionKey('env.job', EXECUTION_NS, 1)}`);
    expect(readFileSync(join(dir, 'direct'), 'utf8')).to.equal(`env.job|3|${executionKey('env.job', EXECUTION_NS, 3)}`);
  });
});

describe('runner keys: the redis companion (real Redis)', function () {
  this.timeout(20000);
  const prefix = `tickd-test:${randomBytes(6).toString('hex')}:`;
  const url = `redis://${HOST}:6379`;
  let admin: ReturnType<typeof createClient>;
  let user: string | undefined;

  before(async function () {
    await requireService(this, 'redis', HOST, 6379);
    admin = createClient({ url });
    admin.on('error', () => {});
    await admin.connect();
  });

  after(async () => {
    if (!admin) return;
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(keys);
    if (user !== undefined) await admin.sendCommand(['ACL', 'DELUSER', user]);
    admin.destroy();
  });

  function run(command: RedisCommand, key: string, jobId: string, n?: number, at = url): Promise<AttemptOutcome> {
    const { ctx } = capturingContext();
    const spec = { type: 'redis' as const, url: at, command, key };
    return runRedis(numbered(makeExecution(spec, jobId), n), spec, ctx, neverAborted());
  }

  it('RPUSH and LPUSH: the list keeps the job ids, <key>:tickd their records at the same end', async () => {
    const list = `${prefix}list`;
    expect(await run('RPUSH', list, 'a')).to.deep.equal({ kind: 'delivered' });
    expect(await run('RPUSH', list, 'b', 3)).to.deep.equal({ kind: 'delivered' });
    expect(await run('LPUSH', list, 'c', 2)).to.deep.equal({ kind: 'delivered' });
    expect(await admin.lRange(list, 0, -1)).to.deep.equal(['c', 'a', 'b']);
    expect(await admin.lRange(`${list}:tickd`, 0, -1)).to.deep.equal([record('c', 2), record('a', 1), record('b', 3)]);
  });

  it('SET: <key>:tickd holds the record of the execution that set <key>', async () => {
    const key = `${prefix}str`;
    expect(await run('SET', key, 'first')).to.deep.equal({ kind: 'delivered' });
    expect(await run('SET', key, 'second', 4)).to.deep.equal({ kind: 'delivered' });
    expect(await admin.mGet([key, `${key}:tickd`])).to.deep.equal(['second', record('second', 4)]);
  });

  it('PUBLISH: the record follows the job id on the channel <key>:tickd', async () => {
    const channel = `${prefix}chan`;
    const subscriber = admin.duplicate();
    subscriber.on('error', () => {});
    await subscriber.connect();
    const heard: string[] = [];
    await subscriber.subscribe([channel, `${channel}:tickd`], (message, from) => { heard.push(`${from} ${message}`); });
    try {
      expect(await run('PUBLISH', channel, 'pub.keys', 5)).to.deep.equal({ kind: 'delivered' });
      await waitFor(() => heard.length === 2, 5000, 'both messages');
      expect(heard).to.deep.equal([`${channel} pub.keys`, `${channel}:tickd ${record('pub.keys', 5)}`]);
    } finally {
      subscriber.destroy();
    }
  });

  it('keeps a companion list nobody reads to its newest entries', async () => {
    const list = `${prefix}capped`;
    const filler = Array.from({ length: COMPANION_LIST_MAX }, (_, i) => `old${i}`);
    await admin.rPush(`${list}:tickd`, filler);
    expect(await run('RPUSH', list, 'newest')).to.deep.equal({ kind: 'delivered' });
    expect(await admin.lLen(`${list}:tickd`)).to.equal(COMPANION_LIST_MAX);
    expect(await admin.lIndex(`${list}:tickd`, 0)).to.equal('old1');
    expect(await admin.lIndex(`${list}:tickd`, -1)).to.equal(record('newest', 1));
  });

  it('sends the command alone when an ACL refuses the companion: the value arrives as before', async () => {
    user = `tickd-test-${randomBytes(4).toString('hex')}`;
    const list = `${prefix}acl`;
    await admin.sendCommand(['ACL', 'SETUSER', user, 'on', '>pw', `~${list}`, '&*', '+@all']);
    expect(await run('RPUSH', list, 'only.value', 1, `redis://${user}:pw@${HOST}:6379`)).to.deep.equal({ kind: 'delivered' });
    expect(await admin.lRange(list, 0, -1)).to.deep.equal(['only.value']);
    expect(await admin.exists(`${list}:tickd`)).to.equal(0);
  });
});
