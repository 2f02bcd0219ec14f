// Logfile formats on the real daemon (doc/logfile-format.md, Extension records;
// tickd(8) EXIT STATUS): a log holding a record of a newer tickd is refused at startup with one
// line naming the format and left byte for byte as it was (not cut as a torn tail, not
// compacted), and `tickd dump` says the same; older logs load: ztick's (whose compaction stays
// ztick's, no format mark added), and this format's, whose format mark a compaction keeps at
// the head.
import { expect } from 'chai';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'smol-toml';
import { buildConfig, runTickd } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { logfileDaemon, logfileOf, snapshot } from './logfile-helpers.ts';

const FIXTURE = new URL('../fixtures/logfile/ztick-v1.log', import.meta.url);
const FIXTURE_BYTES = 380;
/** A record of a future tickd: type 0x10, needs format 7, then a body this tickd cannot know. */
const NEWER = Buffer.from([0, 0, 0, 7, 0x10, 0, 7, 0xde, 0xad, 0xbe, 0xef]);
/** The format mark of format 2 (type 4, needs 2), as a frame. */
const MARK = Buffer.from([0, 0, 0, 3, 4, 0, 2]);
const COMPACTED = 'logfile compacted';
// The rules the fixture replays to (its job `toto` was left triggered: it runs again and fails).
const FIXTURE_RULES = [
  'd app. direct /bin/echo "hello world" ""',
  'h app.hook. http POST https://hooks.example.com/x',
  'r app.redis. redis redis://localhost:6379/0 RPUSH queue',
  't toto shell titi',
  'w app.wf. awf report --input format=pdf',
];

describe('logfile formats: a record of a newer tickd', function () {
  this.timeout(30000);

  it('refuses to start: exit 1, one line naming format 7, the logfile untouched, nothing compacted', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    // ztick's records, the newer one, then half a frame: a torn tail that startup would
    // otherwise cut off, which must stay too
    const bytes = Buffer.concat([readFileSync(FIXTURE), NEWER, Buffer.from([0, 0, 0, 9, 0])]);
    writeFileSync(path, bytes);
    const config = join(dir, 'tickd.toml');
    // info, and a compaction that would run at once: every line on stderr is looked at
    writeFileSync(config, stringify(buildConfig(dir, { log: { level: 'info' }, database: { persistence: 'logfile', compression_interval: 1 } })));
    const r = await runTickd(['-c', config, '-w', '1'], { cwd: dir });
    expect(r.code).to.equal(1);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    const naming = lines.filter((l) => /format 7/.test(l));
    expect(naming).to.deep.equal([
      `tickd: logfile: LogfileTooNew: ${path}: a record of tickd format 7 at byte offset ${FIXTURE_BYTES}; `
        + 'this tickd reads format 6 and older: upgrade tickd to read this log',
    ]);
    expect(lines[lines.length - 1]).to.equal(naming[0]);
    // the rest is the ordinary start-up log: JSON lines, below warning, no stack trace
    for (const line of lines.slice(0, -1)) expect((JSON.parse(line) as { level: number }).level).to.be.below(40);
    expect(readFileSync(path).equals(bytes)).to.equal(true);
    expect(readdirSync(dir).sort()).to.deep.equal(['logfile', 'tickd.toml']);
  });

  it('tickd dump prints the records before it, then says so in one line: exit 1', async () => {
    const path = logfileOf(tempDir());
    const bytes = Buffer.concat([readFileSync(FIXTURE), NEWER]);
    writeFileSync(path, bytes);
    const r = await runTickd(['dump', path]);
    expect(r.code).to.equal(1);
    expect(r.stdout.split('\n').filter((l) => l !== '')).to.have.length(12);
    expect(r.stderr).to.equal(`tickd dump: ${path}: a record of tickd format 7 at byte offset ${FIXTURE_BYTES}; `
      + 'this tickd reads format 6 and older: upgrade tickd to read this log\n');
    expect(readFileSync(path).equals(bytes)).to.equal(true);
  });
});

describe('logfile formats: older logs load', function () {
  this.timeout(30000);

  /** Starts on `leftover` as an interrupted compaction's `.to_compress` (folded at once); the log after it. */
  async function compactedFrom(leftover: Buffer): Promise<Buffer> {
    const dir = tempDir();
    writeFileSync(`${logfileOf(dir)}.to_compress`, leftover);
    const daemon = await logfileDaemon(dir);
    try {
      await daemon.waitForLog((rec) => rec['msg'] === COMPACTED);
      const state = await snapshot(daemon.tcp);
      expect(state.rules).to.deep.equal(FIXTURE_RULES);
      expect(state.jobs).to.include('neg failed -1');
    } finally {
      expect((await daemon.stop()).code).to.equal(0);
    }
    return readFileSync(logfileOf(dir));
  }

  it('ztick\'s: it loads, and its compaction adds no format mark (ztick could still read it)', async () => {
    const dir = tempDir();
    copyFileSync(FIXTURE, logfileOf(dir));
    const daemon = await logfileDaemon(dir);
    try {
      expect((await snapshot(daemon.tcp)).rules).to.deep.equal(FIXTURE_RULES);
    } finally {
      await daemon.stop();
    }
    const after = await compactedFrom(readFileSync(FIXTURE));
    for (let at = 0; at < after.length; at += 4 + after.readUInt32BE(at)) expect(after[at + 4]).to.be.below(4);
  });

  it('this format\'s: a log with a format mark loads, and compaction keeps the mark at the head', async () => {
    const after = await compactedFrom(Buffer.concat([readFileSync(FIXTURE), MARK]));
    expect(after.subarray(0, MARK.length).equals(MARK)).to.equal(true);
    expect(after.indexOf(MARK, 1)).to.equal(-1);
  });
});
