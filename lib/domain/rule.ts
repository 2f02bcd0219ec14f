// A rule maps an identifier prefix (pattern) to a runner. Longest pattern wins; equal
// patterns: smallest rule identifier wins (tickd-protocol(7) "Identifiers and patterns").
import type { RuleOptions } from './rule-options.ts';
import type { RunnerSpec } from './runner-spec.ts';

export interface Rule {
  readonly id: string;
  readonly pattern: string;
  readonly runner: RunnerSpec;
  /** Retries and limits (rule-options.ts); absent on a rule without any. */
  readonly options?: RuleOptions | undefined;
}
