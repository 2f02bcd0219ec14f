// Damaged logfiles at startup (doc/logfile-format.md): an incomplete final frame (a torn write)
// is cut off with a warning and the daemon carries on, writing after the cut; a complete frame
// that does not decode stops startup with exit 1 and one stderr line naming the byte offset,
// and leaves the file untouched. Damage is done to copies, never to the fixture.
import { expect } from 'chai';
import { appendFileSync, copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'smol-toml';
import { buildConfig, runTickd } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { FAR_FUTURE_NS, getJob, logfileDaemon, logfileOf, logRecords, ok, snapshot } from './logfile-helpers.ts';

const FIXTURE = new URL('../fixtures/logfile/ztick-v1.log', import.meta.url);
const FIXTURE_BYTES = 380;
const TORN_MSG = 'logfile ends with an incomplete record (a torn write); cutting it off';

describe('logfile damage: a torn final frame', function () {
  this.timeout(30000);

  it('is cut off with a warning; earlier records stay, and writes after it survive another restart', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    let daemon = await logfileDaemon(dir);
    let c = await LineClient.connect(daemon.tcp);
    await ok(c, 'RULE SET torn torn. shell "echo x"');
    await ok(c, `SET torn.a ${FAR_FUTURE_NS}`);
    await ok(c, `SET torn.b ${FAR_FUTURE_NS + 1n}`);
    await ok(c, 'REMOVE torn.b');
    c.close();
    const state = await snapshot(daemon.tcp);
    expect((await daemon.stop()).code).to.equal(0);

    const intact = statSync(path).size;
    // a job frame that announces 20 payload bytes but holds only 7 of them
    appendFileSync(path, Buffer.from([0, 0, 0, 20, 0, 0, 6, 0x74, 0x6f, 0x72, 0x6e]));
    daemon = await logfileDaemon(dir);
    const warnings = logRecords(daemon, TORN_MSG);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include({ level: 40, offset: intact, bytes: 11 });
    expect(statSync(path).size).to.equal(intact);
    expect(await snapshot(daemon.tcp)).to.deep.equal(state);

    c = await LineClient.connect(daemon.tcp);
    await ok(c, `SET torn.c ${FAR_FUTURE_NS + 2n}`);
    await ok(c, 'RULE SET torn2 torn2. direct /bin/true');
    c.close();
    await daemon.kill();

    daemon = await logfileDaemon(dir);
    try {
      expect(logRecords(daemon, TORN_MSG)).to.have.length(0);
      c = await LineClient.connect(daemon.tcp);
      expect(await getJob(c, 'torn.a')).to.equal(`planned ${FAR_FUTURE_NS}`);
      expect(await getJob(c, 'torn.c')).to.equal(`planned ${FAR_FUTURE_NS + 2n}`);
      expect(await getJob(c, 'torn.b')).to.equal('g ERROR not_found job "torn.b" does not exist');
      c.close();
      expect((await snapshot(daemon.tcp)).rules).to.deep.equal(['torn torn. shell "echo x"', 'torn2 torn2. direct /bin/true']);
    } finally {
      await daemon.stop();
    }
  });

  it('an incomplete frame header alone is a torn tail too', async () => {
    const dir = tempDir();
    const path = logfileOf(dir);
    copyFileSync(FIXTURE, path);
    appendFileSync(path, Buffer.from([0, 0, 0]));
    const daemon = await logfileDaemon(dir);
    try {
      expect(logRecords(daemon, TORN_MSG)[0]).to.include({ offset: FIXTURE_BYTES, bytes: 3 });
      expect(readFileSync(path).equals(readFileSync(FIXTURE))).to.equal(true);
      const c = await LineClient.connect(daemon.tcp);
      expect(await getJob(c, 'neg')).to.equal('failed -1');
      c.close();
    } finally {
      await daemon.stop();
    }
  });
});

describe('logfile damage: a complete frame that does not decode', function () {
  this.timeout(30000);

  /** Starts tickd on `bytes` as its logfile; it must refuse to start. */
  async function refused(bytes: Buffer): Promise<{ stderr: string; after: Buffer }> {
    const dir = tempDir();
    const path = logfileOf(dir);
    writeFileSync(path, bytes);
    const config = join(dir, 'tickd.toml');
    // warn: the only line on stderr must then be the startup error itself
    writeFileSync(config, stringify(buildConfig(dir, { log: { level: 'warn' }, database: { persistence: 'logfile' } })));
    const r = await runTickd(['-c', config, '-w', '1'], { cwd: dir });
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    return { stderr: r.stderr, after: readFileSync(path) };
  }

  const fixture = () => readFileSync(FIXTURE);

  it('an unknown record type byte in the last frame: exit 1, one line naming its byte offset', async () => {
    const bytes = Buffer.concat([fixture(), Buffer.from([0, 0, 0, 4, 9, 0, 1, 0x61])]);
    const { stderr, after } = await refused(bytes);
    const lines = stderr.split('\n').filter((l) => l !== '');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^tickd: logfile: LogfileError: .*logfile: record at byte offset 380 does not decode: unknown record type byte 9/);
    expect(after.equals(bytes)).to.equal(true); // nothing cut, nothing rewritten
  });

  it('damage in the middle of the file stops startup there: nothing after it is skipped silently', async () => {
    const bytes = fixture();
    bytes[20 + 4] = 7; // the rule frame at offset 20 now starts with an unknown type byte
    const { stderr, after } = await refused(bytes);
    expect(stderr.trim().split('\n')).to.have.length(1);
    expect(stderr).to.match(/record at byte offset 20 does not decode/);
    expect(after.equals(bytes)).to.equal(true);
  });

  it('an unknown job status byte is named too', async () => {
    const bytes = fixture();
    bytes[19] = 4; // status of the first job (offset 0): 4 + 1 + 2 + 4 + 8
    const { stderr } = await refused(bytes);
    expect(stderr).to.match(/^tickd: logfile: LogfileError: .*record at byte offset 0 does not decode/);
  });

  it('an impossible frame length at the end is corruption, not a torn tail', async () => {
    const bytes = Buffer.concat([fixture(), Buffer.from([0xff, 0xff, 0xff, 0xff, 0])]);
    const { stderr, after } = await refused(bytes);
    expect(stderr).to.match(/byte offset 380/);
    expect(after.equals(bytes)).to.equal(true);
  });
});
