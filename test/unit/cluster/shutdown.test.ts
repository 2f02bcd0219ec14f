// The ordered stop (cluster/shutdown.ts) over stand-in parts: the firing held before anything
// else, workers drained (the engine still answers them) while the runners get their grace,
// then the tick, the settle of the last results, the log, telemetry and the pidfile, each step
// after the previous one has finished; a stop during start-up finds only some parts.
import { expect } from 'chai';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUNNER_GRACE_MS, stopParts, type StopParts } from '../../../cluster/shutdown.ts';
import { tempDir } from '../../helpers/tmp.ts';

describe('cluster/shutdown', () => {
  it('holds the firing, drains workers while the runners stop, then stops the tick, settles the last results, closes the log and telemetry, removes the pidfile', async () => {
    const order: string[] = [];
    const later = (name: string) => () => new Promise<void>((resolve) => setImmediate(() => { order.push(name); resolve(); }));
    const pidfile = join(tempDir(), 'tickd.pid');
    writeFileSync(pidfile, '1\n');
    const parts = {
      engine: { holdFiring: () => { order.push('firing held'); }, settle: later('results settled') },
      supervisor: { drain: later('workers drained') },
      ticker: { stop: () => { order.push('tick stopped'); } },
      pool: { stop: (graceMs: number) => { order.push(`runners asked to stop (${graceMs} ms)`); return later('runners stopped')(); } },
      storage: { close: later('log closed') },
      telemetry: { shutdown: later('telemetry flushed') },
      pidfile,
    } as unknown as StopParts;
    await stopParts(parts);
    expect(order).to.deep.equal(['firing held', `runners asked to stop (${RUNNER_GRACE_MS} ms)`, 'workers drained', 'runners stopped', 'tick stopped', 'results settled', 'log closed', 'telemetry flushed']);
    expect(existsSync(pidfile)).to.equal(false);
    expect(RUNNER_GRACE_MS, 'runners get what an HTTP request in flight gets').to.equal(5000);
  });

  it('a stop during start-up acts on the parts that exist, and leaves a pidfile it did not write', async () => {
    const order: string[] = [];
    const pidfile = join(tempDir(), 'tickd.pid');
    writeFileSync(pidfile, 'another instance\n');
    await stopParts({ storage: { close: async () => { order.push('log closed'); } } } as unknown as StopParts);
    expect(order).to.deep.equal(['log closed']);
    expect(existsSync(pidfile)).to.equal(true);
  });
});
