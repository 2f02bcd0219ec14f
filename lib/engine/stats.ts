// STAT (tickd-protocol(7) STATISTICS): the 15 values, in the order listed there, all O(1).
import type { StatValues, CompressionState } from '../domain/stat.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';

export interface StatSources {
  readonly startedNs: bigint;
  readonly jobs: JobStore;
  readonly rules: RuleStore;
  readonly connections: () => number;
  readonly executions: () => { pending: number; inflight: number };
  readonly persistence: 'logfile' | 'memory' | 'jetstream';
  readonly compression: () => CompressionState;
  readonly authEnabled: boolean;
  readonly tlsEnabled: boolean;
  readonly framerate: number;
}

export function buildStat(s: StatSources): StatValues {
  const c = s.jobs.counts();
  const ex = s.executions();
  return {
    uptime_ns: process.hrtime.bigint() - s.startedNs,
    connections: BigInt(s.connections()),
    jobs_total: BigInt(c.total),
    jobs_planned: BigInt(c.planned),
    jobs_triggered: BigInt(c.triggered),
    jobs_executed: BigInt(c.executed),
    jobs_failed: BigInt(c.failed),
    rules_total: BigInt(s.rules.size),
    executions_pending: BigInt(ex.pending),
    executions_inflight: BigInt(ex.inflight),
    persistence: s.persistence,
    compression: s.compression(),
    auth_enabled: s.authEnabled ? '1' : '0',
    tls_enabled: s.tlsEnabled ? '1' : '0',
    framerate: BigInt(s.framerate),
  };
}
