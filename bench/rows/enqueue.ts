// Enqueue: durable SET/s in the configuration of the peer comparison (issue 22 point 3): a
// logfile with fsync_on_persist, 2 connection workers, 4 connections each keeping 256 SETs
// in flight (closed loop: one more SET for each reply), 5 s after 1 s of warm-up. pg-boss's
// best here was 72 564 jobs/s with 1 000-row batched SQL; the target is twice that.
import type { Row } from '../lib/suite.ts';
import { closedLoop } from './durable.ts';

const CONNECTIONS = 4;
const DEPTH = 256;

export const row: Row = {
  name: 'enqueue',
  title: `durable SET/s, logfile + fsync, 2 workers, ${CONNECTIONS} connections x ${DEPTH} in flight, 5 s`,
  run: async () => {
    const run = await closedLoop('enqueue', 'logfile', DEPTH, [], { connections: CONNECTIONS, workers: 2 });
    return [{
      label: `durable SET/s, logfile + fsync, 2 workers, ${CONNECTIONS} conn x ${DEPTH} in flight`,
      value: run.perSecond,
      unit: 'SET/s',
      target: { op: '>=', value: 150_000 },
      note: run.rounds === null ? undefined : `${(run.records! / run.rounds).toFixed(1)} records per commit round`,
    }];
  },
};
