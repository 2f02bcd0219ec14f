import { expect } from 'chai';
import { outcomeSucceeded, type AttemptOutcome } from '../../../lib/domain/attempt.ts';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDirect } from '../../../lib/runner/direct.ts';
import { RunnerPool } from '../../../lib/runner/pool.ts';
import { OutputTail, runProcess, TAIL_BYTES } from '../../../lib/runner/process.ts';
import { runShell } from '../../../lib/runner/shell.ts';
import { alive } from '../../helpers/procfs.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { capturingContext, EXECUTION_NS, makeExecution, neverAborted, waitFor } from '../../helpers/runner-context.ts';

function shell(command: string, signal = neverAborted()) {
  const { ctx, lines } = capturingContext();
  const exec = makeExecution({ type: 'shell', command });
  const outcome = runShell(exec, { type: 'shell', command }, ctx, signal);
  return { result: outcome.then(outcomeSucceeded), outcome, lines };
}

function direct(executable: string, args: string[], signal = neverAborted()) {
  const { ctx, lines } = capturingContext();
  const spec = { type: 'direct' as const, executable, args };
  const outcome = runDirect(makeExecution(spec), spec, ctx, signal);
  return { result: outcome.then(outcomeSucceeded), outcome, lines };
}

describe('runner/process (shell, direct)', function () {
  this.timeout(20000);

  it('succeeds on exit status 0 and fails on any other', async () => {
    expect(await shell('exit 0').result).to.equal(true);
    expect(await shell('exit 1').result).to.equal(false);
    expect(await shell('exit 255').result).to.equal(false);
    expect(await direct('/bin/true', []).result).to.equal(true);
    expect(await direct('/bin/false', []).result).to.equal(false);
  });

  it('passes the shell path, its args and the command as the last argument', async () => {
    const dir = tempDir();
    const out = join(dir, 'argv');
    const { ctx } = capturingContext();
    const fakeShell = join(dir, 'fake-shell');
    writeFileSync(fakeShell, `#!/bin/sh\nprintf '%s\\0' "$@" > '${out}'\n`);
    chmodSync(fakeShell, 0o755);
    const spec = { type: 'shell' as const, command: 'echo "a b" | wc' };
    const ok = outcomeSucceeded(await runShell(makeExecution(spec), spec, { ...ctx, shellPath: fakeShell, shellArgs: ['-e', '-c'] }, neverAborted()));
    expect(ok).to.equal(true);
    expect(readFileSync(out, 'utf8').split('\0').slice(0, -1)).to.deep.equal(['-e', '-c', 'echo "a b" | wc']);
  });

  it('gives the child TICKD_JOB_ID and TICKD_JOB_EXECUTION (exact nanoseconds) and keeps our env', async () => {
    const dir = tempDir();
    const out = join(dir, 'env');
    process.env.TICKD_TEST_INHERITED = 'inherited-value';
    try {
      const ok = await direct('/bin/sh', ['-c', 'printf "%s|%s|%s" "$TICKD_JOB_ID" "$TICKD_JOB_EXECUTION" "$TICKD_TEST_INHERITED" > "$1"', 'sh', out]).result;
      expect(ok).to.equal(true);
    } finally {
      delete process.env.TICKD_TEST_INHERITED;
    }
    expect(readFileSync(out, 'utf8')).to.equal(`job.test.1|${EXECUTION_NS.toString()}|inherited-value`);
  });

  it('gives the child /dev/null as stdin', async () => {
    // `cat` would block forever on an inherited terminal or pipe; /dev/null ends it at once.
    expect(await shell('cat && test "$(readlink /proc/self/fd/0)" = /dev/null').result).to.equal(true);
  });

  it('passes direct arguments literally: shell metacharacters have no effect', async () => {
    const dir = tempDir();
    const out = join(dir, 'argv.json');
    const marker = join(dir, 'marker');
    const meta = [`$(touch ${marker})`, `; touch ${marker}`, '`id`', '| cat', '*', '$HOME', "'quoted'", 'a b', ''];
    const script = 'require("node:fs").writeFileSync(process.argv[1], JSON.stringify(process.argv.slice(2)))';
    const ok = await direct(process.execPath, ['-e', script, out, ...meta]).result;
    expect(ok).to.equal(true);
    expect(JSON.parse(readFileSync(out, 'utf8'))).to.deep.equal(meta);
    expect(existsSync(marker)).to.equal(false);
  });

  it('drains a child writing 10 MB to stdout and stderr without hanging; logs only the tail', async () => {
    const { result, lines } = shell('head -c 10485760 /dev/zero | tr "\\0" x; head -c 10485760 /dev/zero | tr "\\0" y >&2; printf END');
    expect(await result).to.equal(true);
    await waitFor(() => lines.some((l) => l.includes('runner process finished')), 5000, 'the debug line');
    const record = JSON.parse(lines.find((l) => l.includes('runner process finished'))!) as { stdout: string; stderr: string; status: string };
    expect(record.status).to.equal('exit 0');
    expect(record.stdout.endsWith('xxxxEND')).to.equal(true);
    expect(record.stdout).to.match(/^\[\d+ bytes skipped\]x/);
    expect(record.stdout.length).to.be.below(TAIL_BYTES + 40);
    expect(record.stderr.endsWith('yyyy')).to.equal(true);
    expect(record.stderr.length).to.be.below(TAIL_BYTES + 40);
  });

  it('fails, without throwing, on a missing or non-executable file', async () => {
    expect(await direct('/nonexistent/tickd-no-such-binary', []).result).to.equal(false);
    const dir = tempDir();
    const plain = join(dir, 'not-executable');
    writeFileSync(plain, '#!/bin/sh\nexit 0\n');
    chmodSync(plain, 0o644);
    expect(await direct(plain, []).result).to.equal(false);
    expect(await direct('', []).result).to.equal(false);
    expect(await direct('/bin/true', ['nul\0byte']).result).to.equal(false);
    const { ctx } = capturingContext();
    const spec = { type: 'shell' as const, command: 'true' };
    const gone: AttemptOutcome = await runShell(makeExecution(spec), spec, { ...ctx, shellPath: '/nonexistent/sh' }, neverAborted());
    expect(gone.kind).to.equal('spawn_error');
    expect((gone as { error: string }).error).to.contain('ENOENT');
  });

  it('fails when the child is killed by a signal, and names it', async () => {
    expect(await shell('kill -9 $$').result).to.equal(false);
    expect(await shell('echo dying >&2; kill -TERM $$').outcome).to.deep.equal({ kind: 'signal', signal: 'SIGTERM', stderr: 'dying\n' });
  });

  it('gives the exit status and the last 512 bytes of stderr as the outcome, at any log level', async () => {
    expect(await shell('echo out; echo "it broke" >&2; exit 3').outcome).to.deep.equal({ kind: 'exit', status: 3, stderr: 'it broke\n' });
    expect(await direct('/bin/true', []).outcome).to.deep.equal({ kind: 'exit', status: 0, stderr: '' });
    // 600 bytes, then a marker: the tail keeps the end, cut to 512 bytes.
    const long = await shell('head -c 600 /dev/zero | tr "\\0" a >&2; printf END >&2; exit 1').outcome;
    expect(long).to.deep.include({ kind: 'exit', status: 1 });
    const stderr = (long as { stderr: string }).stderr;
    expect(Buffer.byteLength(stderr)).to.equal(512);
    expect(stderr.endsWith('aaaEND')).to.equal(true);
    // Without debug logging (stdout to /dev/null), stderr is still read.
    const quiet = capturingContext();
    quiet.ctx.log.level('info');
    const spec = { type: 'shell' as const, command: 'echo quiet >&2; exit 4' };
    expect(await runShell(makeExecution(spec), spec, quiet.ctx, neverAborted())).to.deep.equal({ kind: 'exit', status: 4, stderr: 'quiet\n' });
  });

  it('does not wait for a grandchild that keeps stderr open', async () => {
    const started = Date.now();
    expect(await shell('(sleep 5 >&2 &); echo early >&2; exit 2').outcome).to.deep.equal({ kind: 'exit', status: 2, stderr: 'early\n' });
    expect(Date.now() - started).to.be.below(2000);
  });

  it('abort kills the child and its process group', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    const controller = new AbortController();
    const started = Date.now();
    const { result } = shell(`sleep 30 & echo $! > ${pidFile}; wait`, controller.signal);
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), 5000, 'the pid file');
    const sleepPid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(sleepPid)).to.equal(true);
    controller.abort();
    expect(await result).to.equal(false);
    expect(await shell('true', controller.signal).outcome).to.deep.equal({ kind: 'aborted' });
    expect(Date.now() - started).to.be.below(10000);
    await waitFor(() => !alive(sleepPid), 5000, 'the grandchild sleep to die');
  });

  it('does not start anything once already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { ctx } = capturingContext();
    expect(await runProcess(['/bin/true'], makeExecution({ type: 'direct', executable: '/bin/true', args: [] }), ctx.log, controller.signal)).to.deep.equal({ kind: 'aborted' });
  });
});

describe('runner/process OutputTail', () => {
  it('keeps exactly the last bytes and counts the skipped ones', () => {
    const tail = new OutputTail(8);
    tail.push(Buffer.from('0123456789'));
    tail.push(Buffer.from('abc'));
    tail.push(Buffer.from('de'));
    expect(tail.text()).to.equal('[7 bytes skipped]789abcde');
    const small = new OutputTail(8);
    small.push(Buffer.from('hi'));
    expect(small.text()).to.equal('hi');
  });
});

describe('runner/pool with the real runners', () => {
  it('runs real executions through runExecution by default (shell and direct)', async () => {
    const results = new Map<string, boolean>();
    const pool = new RunnerPool({ maxInflight: 4, ctx: capturingContext().ctx, onResult: (e, ok) => results.set(e.jobId, ok) });
    pool.submit(makeExecution({ type: 'shell', command: 'exit 0' }, 'ok.job'));
    pool.submit(makeExecution({ type: 'shell', command: 'exit 7' }, 'bad.job'));
    pool.submit(makeExecution({ type: 'direct', executable: '/bin/true', args: [] }, 'direct.job'));
    await waitFor(() => results.size === 3, 5000, 'three results');
    expect(Object.fromEntries(results)).to.deep.equal({ 'ok.job': true, 'bad.job': false, 'direct.job': true });
  });
});
