// --log-format pretty (tickd(8) "Logs") on the real daemon: every record of the primary and of
// the workers is one readable line (time, level, role[pid], component, message, key=value),
// none is JSON, and there is no colour on a pipe. The JSON default is what every other
// integration test reads.
import { expect } from 'chai';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LineClient, waitFor } from '../helpers/client.ts';
import { Daemon, parseAddress } from '../helpers/daemon.ts';
import { childPids } from '../helpers/procfs.ts';

const TOKENS = fileURLToPath(new URL('../fixtures/auth/tokens.toml', import.meta.url));
/** time, level, role[pid], optional component, message. */
const LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) (primary|worker|runner)\[(\d+)\](?: [a-z-]+)?: (.*)$/;

describe('--log-format pretty', function () {
  this.timeout(30000);
  let daemon: Daemon | null = null;
  after(async () => { await daemon?.kill(); });

  it('writes one readable line per record, in the primary and in the workers', async () => {
    daemon = Daemon.spawn({ workers: 2, args: ['--log-format', 'pretty'], config: { controller: { auth_file: TOKENS } } });
    const d = daemon;
    const lines = (): string[] => d.stderr.filter((l) => l !== '');
    await waitFor(() => lines().some((l) => / INFO {2}primary\[\d+\]: ready /.test(l)), 15000, `the ready line; stderr:\n${d.stderr.join('\n')}`);
    const ready = lines().find((l) => / primary\[\d+\]: ready /.test(l))!;
    expect(ready).to.match(/: ready tcp=127\.0\.0\.1:\d+ http=null tls=false auth=true workers=2 persistence=memory$/);

    // A worker's record: a failed AUTH is logged by the worker that served it.
    const client = await LineClient.connect(parseAddress(/ tcp=(\S+)/.exec(ready)![1]!));
    try {
      client.write('AUTH not-a-secret\n');
      await client.waitClosed();
    } finally {
      client.close();
    }
    await waitFor(() => lines().some((l) => / WARN {2}worker\[\d+\]: authentication failed$/.test(l)), 5000, 'the worker\'s line');
    const workerPid = Number(/worker\[(\d+)\]/.exec(lines().find((l) => l.includes('authentication failed'))!)![1]);
    expect(childPids(d.proc.pid!)).to.include(workerPid);

    expect(await d.stop()).to.deep.equal({ code: 0, signal: null });
    await new Promise<void>((resolve) => { if (d.proc.stderr!.readableEnded) resolve(); else d.proc.stderr!.once('end', resolve); });
    const all = lines();
    for (const line of all) {
      expect(line, 'a pretty line').to.match(LINE);
      expect(() => JSON.parse(line), `not JSON: ${line}`).to.throw();
      expect(line, 'no colour on a pipe').not.to.include('\u001b');
    }
    const messages = all.map((l) => LINE.exec(l)![5]!);
    expect(messages[0]).to.match(new RegExp(`^starting config=${join(d.configPath).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} version=\\S+$`));
    expect(messages).to.include.members(['stopping signal=SIGTERM phase=ready', 'stopped']);
    expect(messages.some((m) => m.startsWith('state loaded persistence=memory '))).to.equal(true);
    expect(new Set(all.map((l) => Number(LINE.exec(l)![4])))).to.include.members([d.proc.pid!, workerPid]);
  });
});
