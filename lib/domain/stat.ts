// The 15 STAT keys, in the order tickd-protocol(7) STATISTICS lists them.

export const STAT_KEYS = [
  'uptime_ns', 'connections', 'jobs_total', 'jobs_planned', 'jobs_triggered', 'jobs_executed',
  'jobs_failed', 'rules_total', 'executions_pending', 'executions_inflight', 'persistence',
  'compression', 'auth_enabled', 'tls_enabled', 'framerate',
] as const;
export type StatKey = (typeof STAT_KEYS)[number];

/** Values are strings or bigints so that every figure is written exactly. */
export type StatValues = { readonly [K in StatKey]: string | bigint };

export type CompressionState = 'idle' | 'running' | 'success' | 'failure';
